#!/usr/bin/env bash
# How soon the server decides on Redis again after Redis was frozen under load: a Tollgate server with the
# default settings on one redis-server, wrk on the decision API (10 000 or 100 000 keys, 64 or 256
# connections); 4 s in, Redis is stopped (SIGSTOP) for 3 s, then continued while wrk goes on. The server's own
# metrics are read about every 50 ms: "back on Redis" is the first reading after SIGCONT in which decisions made by
# Redis (tollgate_decisions_total{source="redis"}) grew, "kept" the share of the last two seconds' decisions that
# Redis made. Prints a Markdown table for docs/benchmarks.md.
#
# Needs: the built jar (./mvnw -B -q -DskipTests package -pl tollgate-server -am), wrk, redis-server, curl and
# python3 on PATH (Debian: apt-get install wrk redis-server curl). Every process it starts listens on 127.0.0.1
# only and is stopped at the end.
#
# Usage: tollgate-benchmarks/stall-under-load.sh
set -euo pipefail
cd "$(dirname "$0")/.."

JAR=tollgate-server/target/tollgate-server.jar
for tool in wrk redis-server java curl python3; do
  command -v "$tool" >/dev/null || { echo "stall-under-load: $tool is not on PATH" >&2; exit 2; }
done
[ -f "$JAR" ] || { echo "stall-under-load: $JAR is missing; build it first" >&2; exit 2; }

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -CONT "$pid" 2>/dev/null || true; kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
await_port() { for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }

# Prints the decisions of policy per-key made by Redis, and all of them, from one reading of the metrics.
decisions() { # port
  curl -s "http://127.0.0.1:$1/metrics" \
    | awk '/^tollgate_decisions_total\{/ && /policy="per-key"/ {all += $NF; if (/source="redis"/) redis += $NF}
           END {printf "%d %d", redis, all}'
}

point() { # keys connections
  local redis port server wrk_pid
  redis=$(free_port)
  redis-server --port "$redis" --bind 127.0.0.1 --save '' --appendonly no --daemonize no > "$WORK/redis.log" 2>&1 &
  local redis_pid=$!
  PIDS+=("$redis_pid")
  await_port "$redis"
  cat > "$WORK/tollgate.yaml" <<EOF
server: {host: 127.0.0.1, expose-metrics-publicly: true}   # the harness reads /metrics on the same port
redis:
  uri: redis://127.0.0.1:$redis
policies:
  per-key:
    limits: [{capacity: 100000000, refill: 1000000/s}]
EOF
  cat > "$WORK/check.lua" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  return wrk.format(nil, nil, nil, '{"policy":"per-key","key":"k' .. math.random($1) .. '"}')
end
EOF
  port=$(free_port)
  java -jar "$JAR" --config "$WORK/tollgate.yaml" --port "$port" > "$WORK/out" 2> "$WORK/err" &
  server=$!
  PIDS+=("$server")
  for _ in $(seq 600); do grep -q "tollgate listening" "$WORK/out" && break; sleep 0.1; done
  wrk -t1 -c"$2" -d14s -s "$WORK/check.lua" "http://127.0.0.1:$port/v1/check" > "$WORK/wrk" &
  wrk_pid=$!
  : > "$WORK/samples"
  local start now t stopped="" resumed=""
  start=${EPOCHREALTIME/./}
  while kill -0 "$wrk_pid" 2>/dev/null; do
    now=${EPOCHREALTIME/./}
    t=$(( now - start )) # microseconds
    if [ -z "$stopped" ] && [ "$t" -ge 4000000 ]; then kill -STOP "$redis_pid"; stopped=$t; fi
    if [ -n "$stopped" ] && [ -z "$resumed" ] && [ "$t" -ge 7000000 ]; then kill -CONT "$redis_pid"; resumed=$t; fi
    echo "$t $(decisions "$port")" >> "$WORK/samples"
    sleep 0.05
  done
  python3 - "$WORK/samples" "$resumed" "$1" "$2" <<'PY'
import sys
rows = [(float(t) / 1e6, float(r), float(a)) for t, r, a in (line.split() for line in open(sys.argv[1])
                                                             if len(line.split()) == 3)]
resumed = float(sys.argv[2]) / 1e6
back = next((t for (t, r), (_, r0) in zip([(x[0], x[1]) for x in rows[1:]], [(x[0], x[1]) for x in rows])
             if t > resumed and r > r0), None)
end = 14.0 # wrk's run: the last readings may come after it stopped
last = [x for x in rows if end - 2 <= x[0] <= end]
kept = (last[-1][1] - last[0][1]) / max(1, last[-1][2] - last[0][2])
print(f"| {int(sys.argv[4])} | {int(sys.argv[3]):,} | {'never' if back is None else f'{back - resumed:.2f} s'} | {100 * kept:.1f} % |")
PY
  kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true
  kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true
}

echo "wrk -t1, 14 s; Redis stopped 4 s in for 3 s; metrics read every 50 ms or so; $(nproc) cores;" \
  "$(java -version 2>&1 | head -1); redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"
echo
echo "| connections | keys | back on Redis after SIGCONT (to the reading) | last 2 s decided by Redis |"
echo "| --- | --- | --- | --- |"
for keys in 10000 100000; do
  for connections in 64 256; do
    point "$keys" "$connections"
  done
done
