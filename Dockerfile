# syntax=docker/dockerfile:1
# One image per service, from one Dockerfile:
#   docker build --build-arg SERVICE=gateway -t outreach/gateway .
#   SERVICE: gateway | link-runtime | campaign-service | recipient-service
#            all  (every service plus scripts/migrate.js: the migration Job's image)
# The image runs from the repository layout (/app = repo root), so workspace packages resolve
# through node_modules/@outreach/* exactly as in development.
ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
# Manifests first, so the dependency layer is reused while only sources change.
COPY package.json package-lock.json ./
COPY packages/contracts/package.json packages/contracts/
COPY packages/platform/package.json packages/platform/
COPY recipient-service/package.json recipient-service/
COPY campaign-service/package.json campaign-service/
COPY gateway/package.json gateway/
COPY link-runtime/package.json link-runtime/
RUN npm ci
COPY tsconfig.json tsconfig.base.json ./
COPY protos protos
COPY packages packages
COPY recipient-service recipient-service
COPY campaign-service campaign-service
COPY gateway gateway
COPY link-runtime link-runtime
COPY scripts scripts
RUN npx tsc -b && npm prune --omit=dev

# Gather only what SERVICE needs: compiled code, migrations and static assets, never sources;
# and a workspace's own node_modules, where npm puts a version that differs from the hoisted one.
ARG SERVICE
RUN set -eu; \
    case "${SERVICE:-}" in \
      gateway|link-runtime|campaign-service|recipient-service) services="$SERVICE" ;; \
      all) services="recipient-service campaign-service gateway link-runtime" ;; \
      *) echo "build with --build-arg SERVICE=<gateway|link-runtime|campaign-service|recipient-service|all>" >&2; exit 1 ;; \
    esac; \
    mkdir -p /out/packages /out/scripts; \
    cp -a package.json node_modules protos /out/; \
    for p in contracts platform; do \
      mkdir -p /out/packages/$p && cp -a packages/$p/package.json packages/$p/dist /out/packages/$p/; \
    done; \
    for s in $services; do \
      mkdir -p /out/$s && cp -a $s/package.json $s/dist /out/$s/; \
      for extra in migrations public static assets views node_modules; do \
        if [ -d "$s/$extra" ]; then cp -a "$s/$extra" "/out/$s/"; fi; \
      done; \
    done; \
    if [ "$SERVICE" = all ]; then cp -a scripts/migrate.js /out/scripts/; fi; \
    find /out -name '*.tsbuildinfo' -delete; \
    find /out/packages /out/*/dist -name '*.test.js' -delete 2>/dev/null || true

FROM ${NODE_IMAGE} AS runtime
ARG SERVICE
ENV NODE_ENV=production \
    OUTREACH_SERVICE=${SERVICE} \
    OTEL_SERVICE_NAME=${SERVICE} \
    METRICS_PORT=9464
WORKDIR /app
COPY --from=build --chown=0:0 /out/ ./
# The node image's unprivileged user; numeric so Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 8080 8081 8082 50051 50052 9464
# exec: node is PID 1 and receives SIGTERM directly (graceful drain). The migration image
# (SERVICE=all) runs `node scripts/migrate.js` instead. The node flags are the chart's
# `nodeFlags` (why there); deploy checks keep the two the same.
CMD ["sh", "-c", "if [ \"$OUTREACH_SERVICE\" = all ]; then exec node scripts/migrate.js; else exec node --single-threaded-gc --require @outreach/platform/dist/instrumentation.js \"$OUTREACH_SERVICE/dist/main.js\"; fi"]
