#!/usr/bin/env bash
# Runs every test on real PostgreSQL, Redis and NATS, then prints one summary line:
#   tests: N passed, N failed
set -uo pipefail
cd "$(dirname "$0")/.."

[[ -d node_modules ]] || npm ci --no-audit --no-fund
bash scripts/ensure-services.sh || exit 1

failed_steps=()
step() { echo "== $1"; shift; "$@" || failed_steps+=("$1"); }

step "proto types are current" node scripts/gen-protos.js --check
step "typecheck and build" npx tsc -b
step "lint" npx biome check .

mkdir -p test/artifacts
report=test/artifacts/jest-report.json
npx jest --maxWorkers=2 --json --outputFile="$report" "$@"
jest_status=$?

node scripts/summarize-tests.js "$report" "${failed_steps[@]}"
summary_status=$?
[[ $jest_status -eq 0 && $summary_status -eq 0 ]]
