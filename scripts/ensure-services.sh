#!/usr/bin/env bash
# Makes PostgreSQL, Redis and NATS (JetStream) reachable for local runs and tests.
# Reuses servers that already answer at DATABASE_URL / REDIS_URL / NATS_URL; otherwise
# starts the local Debian ones, installing them with apt-get when it can (as root).
set -euo pipefail

DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/outreach}
REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379}
NATS_URL=${NATS_URL:-nats://127.0.0.1:4222}

hostport() { # URL -> "host port"
  local rest=${1#*://}; rest=${rest##*@}; rest=${rest%%/*}; rest=${rest%%,*}
  echo "${rest%%:*} ${rest##*:}"
}
reachable() { timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }
wait_for() { # name host port
  for _ in $(seq 1 60); do reachable "$2" "$3" && { echo "  $1 is up at $2:$3"; return 0; }; sleep 0.5; done
  echo "  $1 did not come up at $2:$3" >&2; return 1
}
is_local() { [[ $1 == 127.0.0.1 || $1 == localhost || $1 == ::1 ]]; }
apt_updated=0
install_pkg() {
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    echo "  Cannot install $1 here: install it (Debian: apt-get install $1) or point the URL at a running server." >&2
    return 1
  fi
  [[ $apt_updated == 1 ]] || { apt-get update -qq >/dev/null; apt_updated=1; }
  echo "  installing $1 from Debian"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

echo "Checking PostgreSQL, Redis and NATS..."
read -r h p <<<"$(hostport "$DATABASE_URL")"
if ! reachable "$h" "$p"; then
  is_local "$h" || { echo "  PostgreSQL at $h:$p is not reachable" >&2; exit 1; }
  command -v pg_ctlcluster >/dev/null || install_pkg postgresql postgresql
  ver=$(ls /etc/postgresql | sort -V | tail -1)
  hba=/etc/postgresql/$ver/main/pg_hba.conf
  # Local development and CI only: trust loopback connections, as the test machines do.
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
  wait_for PostgreSQL "$h" "$p"
else
  echo "  PostgreSQL is up at $h:$p"
fi

read -r h p <<<"$(hostport "$REDIS_URL")"
if ! reachable "$h" "$p"; then
  is_local "$h" || { echo "  Redis at $h:$p is not reachable" >&2; exit 1; }
  command -v redis-server >/dev/null || install_pkg redis-server redis-server
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$p" --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/outreach.log
  wait_for Redis "$h" "$p"
else
  echo "  Redis is up at $h:$p"
fi

read -r h p <<<"$(hostport "$NATS_URL")"
if ! reachable "$h" "$p"; then
  is_local "$h" || { echo "  NATS at $h:$p is not reachable" >&2; exit 1; }
  command -v nats-server >/dev/null || [[ -x /usr/sbin/nats-server ]] || install_pkg nats-server nats-server
  mkdir -p /var/lib/nats-server
  bin=$(command -v nats-server || echo /usr/sbin/nats-server)
  start-stop-daemon --start --oknodo --background --exec "$bin" -- -a 127.0.0.1 -p "$p" -js \
    -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_for NATS "$h" "$p"
else
  echo "  NATS is up at $h:$p"
fi
