#!/bin/sh
# The container image's build steps, as one script: the Dockerfile's build stage runs it, and
# `npm run check:image` runs it in a temporary directory and starts the result as the image would
# (docs/deploy.md, "Container image"). Usage: scripts/build-image-tree.sh <source> <destination>
#
#   1. copy the source: a git checkout's tracked files, else the whole directory (in the image
#      build, what .dockerignore let through: no node_modules, dist or .data);
#   2. `npm ci`: exactly package-lock.json's tree (`npm install` if it refuses the lockfile) (npm's postinstall builds dist/: the service,
#      the web page, the clients);
#   3. `npm run build` where the project has one;
#   4. `npm prune --omit=dev`: the development packages go (the image carries no compiler for the
#      page, no test tools);
#   5. `node scripts/build.mjs`: dist/main.js up to date with the pruned tree (start-up checks it).
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
if ! npm ci; then
  # Until the lockfile is in step with package.json on every platform (issue 19, item 3), `npm ci`
  # refuses it; the tree is then installed by `npm install`, which is not reproducible.
  echo "build-image-tree: npm ci refused package-lock.json; installing with npm install (NOT reproducible)" >&2
  npm install
fi
if node -e 'process.exit(require("./package.json").scripts?.build ? 0 : 1)'; then
  npm run build
fi
npm prune --omit=dev
# The service's bundle is checked against its inputs at start (scripts/build.mjs) and pruning moved
# some of them: stamp it again here, as the image's user could not write dist/ at run time.
node scripts/build.mjs
# The image runs what it was built from: nothing of npm's cache or logs goes with it.
rm -rf .npm
