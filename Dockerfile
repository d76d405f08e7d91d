# Production image: the official Bun image, dependencies from the lockfile,
# migrations included (applied at start), non-root user, health check.
FROM oven/bun:1.4.5-slim AS deps
WORKDIR /app
COPY package.json bun.lock bunfig.toml ./
RUN bun install --frozen-lockfile --production

FROM oven/bun:1.4.5-slim
WORKDIR /app
ENV NODE_ENV=production PORT=8443 DATA_DIR=/data ROLE=all
COPY --from=deps /app/node_modules ./node_modules
COPY package.json bunfig.toml tsconfig.json ./
COPY src ./src
COPY drizzle ./drizzle
RUN mkdir -p /data && chown -R bun:bun /data
USER bun
VOLUME /data
EXPOSE 8443
# Liveness over HTTPS (the self-signed default or your own certificate); -k because the
# check runs inside the container against localhost.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD bun -e "process.env.NODE_TLS_REJECT_UNAUTHORIZED='0'; const s=process.env.TRUST_PROXY?'http':'https'; fetch(s+'://127.0.0.1:'+(process.env.PORT||8443)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["bun", "run", "src/main.ts"]
