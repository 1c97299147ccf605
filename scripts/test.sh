#!/usr/bin/env bash
# Runs every test on real PostgreSQL, Redis and NATS, plus the offline deployment checks,
# then prints one summary line:  tests: N passed, N failed
# Extra arguments go to jest (e.g. a path to run a subset).
set -uo pipefail
cd "$(dirname "$0")/.."

[[ -d node_modules ]] || npm ci --no-audit --no-fund
bash scripts/ensure-services.sh || exit 1
bash scripts/ensure-chromium.sh

failed_steps=()
step() {
  local name=$1
  shift
  echo "== $name"
  "$@" || failed_steps+=("$name")
}
step "proto types are current" node scripts/gen-protos.js --check
step "typecheck and build" npx tsc -b
step "lint" npx biome check .

echo "== deployment checks (helm lint/template, Kubernetes schemas)"
deploy_out=$(bash scripts/check-deploy.sh 2>&1)
echo "$deploy_out" | grep -v '^deploy: '
deploy_passed=$(grep -c '^ok ' <<<"$deploy_out")
deploy_failed=$(grep -c '^not ok ' <<<"$deploy_out")

echo "== jest"
mkdir -p test/artifacts
report=test/artifacts/jest-report.json
rm -f "$report"
npx jest --maxWorkers=2 --json --outputFile="$report" "$@"
jest_status=$?

node scripts/summarize-tests.js "$report" "$deploy_passed" "$deploy_failed" "${failed_steps[@]}"
summary_status=$?
[[ $jest_status -eq 0 && $summary_status -eq 0 ]]
