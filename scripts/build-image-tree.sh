#!/bin/sh
# The container image's build steps, as one script: the Dockerfile's build stage runs it, and
# `npm run check:image` runs it in a temporary directory and starts the result as the image would
# (docs/deploy.md, "Container image"). Usage: scripts/build-image-tree.sh <source> <destination>
#
#   1. copy the source: a git checkout's tracked files, else the whole directory (in the image
#      build, what .dockerignore let through: no node_modules, dist or .data);
#   2. `npm ci`: exactly package-lock.json's tree;
#   3. `npm run build`: the service, the clients and the page into dist/ (docs/deploy.md,
#      "Production install");
#   4. `npm prune --omit=dev`: the development packages go (no compiler, no bundler, no chain, no
#      test tools); a production tree runs dist/ as built and never rebuilds it.
set -eu
src=$(cd "${1:?usage: build-image-tree.sh <source> <destination>}" && pwd)
dest=${2:?usage: build-image-tree.sh <source> <destination>}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
if [ -n "$(ls -A "$dest")" ]; then
  echo "build-image-tree: $dest is not empty" >&2
  exit 1
fi

if command -v git >/dev/null 2>&1 && git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z --cached | tar --null --no-recursion -T - -cf -) | tar -xf - -C "$dest"
else
  (cd "$src" && tar -cf - --exclude=./node_modules --exclude=./dist --exclude=./.data --exclude=./.git .) |
    tar -xf - -C "$dest"
fi

cd "$dest"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
npm ci
npm run build
npm prune --omit=dev
# The image runs what it was built from: nothing of npm's cache or logs goes with it.
rm -rf .npm
