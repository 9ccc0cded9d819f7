# The relay (paypalych-relay) as a container image. Build from the repository root:
#   docker build -t paypalych-relay .
# or through compose.yaml (relay + PostgreSQL + Caddy, n8n in two sizes). Configured by the
# environment variables `paypalych-relay --help` lists; the SQLite store lives in the /data volume
# unless RELAY_DATABASE names PostgreSQL.
#
# The build stage packs the relay exactly as npm publishes it (`npm pack --workspace relay`: the
# compiled relay and the wire contract it imports); the image installs that tarball, so it runs
# what users of the npm package run.

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
COPY relay/package.json relay/
COPY sandbox/package.json sandbox/
RUN npm install --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.esm.json ./
COPY nodes nodes
COPY relay relay
RUN mkdir /pkg && npm pack --workspace relay --pack-destination /pkg

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    RELAY_DATABASE=/data/relay.sqlite
COPY --from=build /pkg/ /tmp/pkg/
RUN npm install --global --no-audit --no-fund /tmp/pkg/paypalych-relay-*.tgz \
    && rm -rf /tmp/pkg /root/.npm \
    && mkdir /data \
    && chown node:node /data
USER node
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM (docker stop) makes the relay finish or release in-flight deliveries before it exits:
# give it RELAY_SHUTDOWN_GRACE_MS plus a few seconds (`docker stop -t 20`, compose stop_grace_period).
ENTRYPOINT ["paypalych-relay"]
