#!/usr/bin/env bash
# Make sure a Redis answers at $1 (a redis:// URL); start a local redis-server if none does.
set -euo pipefail
url="${1:-redis://127.0.0.1:6379/0}"
py="${2:-python3}"
ping() {
  "$py" - "$url" <<'PY'
import sys
import redis
try:
    redis.Redis.from_url(sys.argv[1], socket_connect_timeout=1).ping()
except Exception:
    sys.exit(1)
PY
}
if ping; then exit 0; fi
hostport="${url#redis://}"; hostport="${hostport%%/*}"; hostport="${hostport##*@}"
host="${hostport%%:*}"; port="${hostport##*:}"; [ "$port" = "$host" ] && port=6379
if ! command -v redis-server >/dev/null; then
  echo "no Redis answers at $url and redis-server is not installed (apt install redis-server)" >&2
  exit 1
fi
echo "starting redis-server on $host:$port"
redis-server --daemonize yes --bind "$host" --port "$port" --save "" --appendonly no \
  --dir /tmp --logfile "/tmp/hive-mind-redis-$port.log"
for _ in $(seq 1 50); do ping && exit 0; sleep 0.1; done
echo "redis-server did not come up on $host:$port" >&2
exit 1
