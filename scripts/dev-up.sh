#!/usr/bin/env bash
# `npm start`: the whole system locally, from a fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -d node_modules ]] || npm ci --no-audit --no-fund
bash scripts/ensure-services.sh
echo "Building..."
npx tsc -b
echo "Migrating..."
node scripts/migrate.js
exec node scripts/dev-up.js
