#!/usr/bin/env bash
# How many decisions degrade while Redis is healthy but the machine is busy: Tollgate servers with the
# default settings (budget 50 ms, failure-policy: local) on one redis-server, under wrk load on the decision
# API (10 000 keys), first one server, then three sharing the Redis. Degraded decisions are counted from
# each server's own metrics (tollgate_decisions_total{source="fallback"}). Prints a Markdown table for
# docs/resilience.md.
#
# Needs: the built jar (./mvnw -B -q -DskipTests package -pl tollgate-server -am), wrk, redis-server, curl
# and python3 on PATH (Debian: apt-get install wrk redis-server curl). Every process it starts listens on
# 127.0.0.1 only and is stopped at the end.
#
# Usage: tollgate-benchmarks/degraded-under-load.sh [SECONDS] [CONNECTIONS]   (default 60 s, 64 connections)
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_RUN=${1:-60}
CONNECTIONS=${2:-64}
JAR=tollgate-server/target/tollgate-server.jar
for tool in wrk redis-server java curl python3; do
  command -v "$tool" >/dev/null || { echo "degraded-under-load: $tool is not on PATH" >&2; exit 2; }
done
[ -f "$JAR" ] || { echo "degraded-under-load: $JAR is missing; build it first" >&2; exit 2; }

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
await_port() { for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }

REDIS=$(free_port)
redis-server --port "$REDIS" --bind 127.0.0.1 --save '' --appendonly no --daemonize no > "$WORK/redis.log" 2>&1 &
PIDS+=($!)
await_port "$REDIS"

cat > "$WORK/tollgate.yaml" <<EOF
server: {host: 127.0.0.1, expose-metrics-publicly: true}   # the harness reads /metrics on the same port
redis:
  uri: redis://127.0.0.1:$REDIS
policies:
  per-key:    # 10 000 keys, each far from its limit: every decision should come from Redis
    limits: [{capacity: 100000000, refill: 1000000/s}]
EOF

cat > "$WORK/check.lua" <<'EOF'
-- POST /v1/check for one of 10 000 keys, picked at random
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  return wrk.format(nil, nil, nil, '{"policy":"per-key","key":"k' .. math.random(10000) .. '"}')
end
EOF

# Starts N servers at once, as a deployment does, and waits until each prints its listening line.
start_servers() { # count
  PORTS=()
  SERVERS=()
  for i in $(seq "$1"); do
    local port
    port=$(free_port)
    java -jar "$JAR" --config "$WORK/tollgate.yaml" --port "$port" > "$WORK/out-$port" 2> "$WORK/err-$port" &
    PIDS+=($!)
    SERVERS+=($!)
    PORTS+=("$port")
  done
  for port in "${PORTS[@]}"; do
    for _ in $(seq 600); do grep -q "tollgate listening" "$WORK/out-$port" && break; sleep 0.1; done
    grep -q "tollgate listening" "$WORK/out-$port" || { echo "server on $port never listened" >&2; exit 1; }
  done
}

stop_servers() {
  for pid in "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
}

# Sums a counter over the servers' /metrics: decisions of policy per-key, of one source or all.
decisions() { # source-pattern
  for port in "${PORTS[@]}"; do curl -s "http://127.0.0.1:$port/metrics"; done \
    | awk -v src="$1" '/^tollgate_decisions_total\{/ && /policy="per-key"/ && $0 ~ "source=\"" src "\"" {sum += $NF} END {printf "%d", sum}'
}

run() { # name servers
  start_servers "$2"
  local per=$(( CONNECTIONS / $2 ))
  local wrks=()
  for port in "${PORTS[@]}"; do
    wrk -t1 -c"$per" -d"${SECONDS_PER_RUN}s" -s "$WORK/check.lua" "http://127.0.0.1:$port/v1/check" > "$WORK/wrk-$port" &
    wrks+=($!)
  done
  for pid in "${wrks[@]}"; do wait "$pid"; done
  local rps=0 total degraded
  for port in "${PORTS[@]}"; do
    rps=$(awk -v sum="$rps" '/Requests\/sec/ {printf "%.0f", sum + $2}' "$WORK/wrk-$port")
  done
  total=$(decisions '[a-z_]+')
  degraded=$(decisions 'fallback')
  printf '| %s | %s | %s | %s | %s |\n' "$1" "$total" "$degraded" \
    "$(python3 -c "print(f'{$degraded * 100000 / max($total, 1):.1f}')")" "$rps"
  grep -h "degraded" "$WORK"/err-* >&2 || true
  stop_servers
}

echo "wrk -t1, $CONNECTIONS connections in all, ${SECONDS_PER_RUN} s from the listening line on; $(nproc) cores;" \
  "$(java -version 2>&1 | head -1); redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"
echo
echo "| servers on one Redis | decisions | degraded | per 100 000 | requests/s |"
echo "| --- | --- | --- | --- | --- |"
run "one server" 1
run "three servers" 3
