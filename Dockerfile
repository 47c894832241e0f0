# The service's container image (docs/deploy.md, "Container image"). Its build steps are one
# script, scripts/build-image-tree.sh, which `npm run check:image` also runs and starts on this
# machine as this file says (the same command, user and health check): no Docker daemon needed.
#
#   docker build -t x402-chat-agent .
#   docker run -p 3000:3000 -e DATABASE_URL=postgres://... -e PAYMENTS=off x402-chat-agent

FROM node:22.23-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN sh scripts/build-image-tree.sh /src /app

FROM node:22.23-bookworm-slim
WORKDIR /app
COPY --from=build /app /app
ENV HOST=0.0.0.0 \
    PORT=3000 \
    PAYMENTS=external \
    DATA_DIR=/tmp/x402-data
# The node image's unprivileged `node` user; /app stays root's and read-only to it.
USER 1000:1000
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
# What `npm start` runs, as the process itself: npm would not pass SIGTERM on (README).
CMD ["node", "--import", "./src/early-signals.mjs", "src/start.mjs"]
