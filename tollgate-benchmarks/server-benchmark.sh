#!/usr/bin/env bash
# The Tollgate server under load on loopback, beside nginx with limit_req proxying the same upstream, in one
# run on one machine. Prints a Markdown table for docs/benchmarks.md.
#
# Needs: the built jars (./mvnw -B -q -DskipTests package -pl tollgate-server,tollgate-benchmarks -am), wrk, nginx and
# redis-server, curl and python3 on PATH (Debian: apt-get install wrk nginx-light redis-server curl). Every process it starts
# listens on 127.0.0.1 only and is stopped at the end; nothing outside this machine is touched.
#
# Usage: tollgate-benchmarks/server-benchmark.sh [SECONDS] [CONNECTIONS]   (default 10 s, 64 connections)
# SECTIONS="nginx proxy api ceiling" (the default: all) picks the groups of rows to run: nginx's own rows, the
# proxy's (and the decision API beside it), the decision API alone, forwarding only. BASELINE_JAR=path/to/an
# older tollgate-server.jar runs the proxy and decision API rows on it too, alternating with this build's (an A/B;
# its rows say "baseline"). COUNTED=1 runs the decision API rows with top-keys counted too (rows say "counted").
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_RUN=${1:-10}
SECTIONS=${SECTIONS:-nginx proxy api ceiling}
section() { [[ " $SECTIONS " == *" $1 "* ]]; }
CONNECTIONS=${2:-64}
JAR=tollgate-server/target/tollgate-server.jar
for tool in wrk nginx redis-server java curl python3; do
  command -v "$tool" >/dev/null || { echo "server-benchmark: $tool is not on PATH" >&2; exit 2; }
done
[ -f "$JAR" ] || { echo "server-benchmark: $JAR is missing; build it first" >&2; exit 2; }
BUILDS=("this build=$JAR")
if [ -n "${BASELINE_JAR:-}" ]; then
  [ -f "$BASELINE_JAR" ] || { echo "server-benchmark: $BASELINE_JAR is missing" >&2; exit 2; }
  BUILDS+=("baseline=$BASELINE_JAR")
fi
# A row's name says which build ran it only in an A/B
tag() { [ ${#BUILDS[@]} -gt 1 ] && echo ", $1" || true; }

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$WORK/nginx-upstream.pid" ] && kill "$(cat "$WORK/nginx-upstream.pid")" 2>/dev/null || true
  [ -f "$WORK/nginx-limit.pid" ] && kill "$(cat "$WORK/nginx-limit.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
await_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }

UPSTREAM=$(free_port); NGINX=$(free_port); REDIS=$(free_port); MEMORY=$(free_port); ONREDIS=$(free_port)

# The upstream: nginx answering 200 with a small body, one worker, so that it is never the bottleneck.
nginx_conf() { # name port body
  cat > "$WORK/$1.conf" <<EOF
worker_processes 1;
pid $WORK/$1.pid;
error_log $WORK/$1-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $WORK/$1-body; proxy_temp_path $WORK/$1-proxy;
  fastcgi_temp_path $WORK/$1-fcgi; uwsgi_temp_path $WORK/$1-uwsgi; scgi_temp_path $WORK/$1-scgi;
  $3
  server { listen 127.0.0.1:$2; $4 }
}
EOF
  nginx -c "$WORK/$1.conf" -p "$WORK"
}
nginx_conf nginx-upstream "$UPSTREAM" "" "location / { return 200 'ok'; }"
# nginx as the limiting proxy: one zone keyed by client address, as Tollgate's route is keyed by IP.
nginx_conf nginx-limit "$NGINX" "
  upstream backend { server 127.0.0.1:$UPSTREAM; keepalive 64; }
  limit_req_zone \$binary_remote_addr zone=open:10m rate=1000000r/s;
  limit_req_zone \$binary_remote_addr zone=shut:10m rate=1r/m;
  limit_req_status 429;" "
  location /open/ { limit_req zone=open burst=1000000 nodelay; proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection \"\"; }
  location /shut/ { limit_req zone=shut; proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection \"\"; }
  location /free/ { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection \"\"; }"

redis-server --port "$REDIS" --bind 127.0.0.1 --save '' --appendonly no --daemonize no > "$WORK/redis.log" 2>&1 &
PIDS+=($!)

tollgate_conf() { # file store
  cat > "$1" <<EOF
# The decision API, health and metrics on the proxy's own port, so that one port measures them all (a
# production proxy keeps them on their own ports: docs/security.md)
server: {host: 127.0.0.1, upstream: "http://127.0.0.1:$UPSTREAM", expose-decision-api-publicly: true,
  expose-health-publicly: true, expose-metrics-publicly: true}
$2
policies:
  open:       # never refuses during a run
    limits: [{capacity: 100000000, refill: 1000000/s}]
  shut:       # refuses all but the first request
    limits: [{capacity: 1, refill: 1/h}]
  per-key:    # for the decision API: 10 000 keys, each far from its limit
    limits: [{capacity: 100000000, refill: 1000000/s}]
rules:
  - {path: /open/**, key: ip, policy: open}
  - {path: /shut/**, key: ip, policy: shut}
EOF
}
# The decision API alone (no upstream)
api_conf() { # file store
  cat > "$1" <<EOF
server: {host: 127.0.0.1, expose-metrics-publicly: true}
$2
policies:
  per-key:    # 10 000 keys, each far from its limit
    limits: [{capacity: 100000000, refill: 1000000/s}]
EOF
}
api_conf "$WORK/api-memory.yaml" ""
api_conf "$WORK/api-redis.yaml" "redis: {uri: 'redis://127.0.0.1:$REDIS', failure-policy: allow}"
api_conf "$WORK/api-redis-leases.yaml" "redis: {uri: 'redis://127.0.0.1:$REDIS', failure-policy: allow, leases: [per-key]}"
# The same, counting who is limited (top-keys), for COUNTED=1
api_conf "$WORK/api-memory-counted.yaml" "top-keys: {enabled: true}"
api_conf "$WORK/api-redis-counted.yaml" "redis: {uri: 'redis://127.0.0.1:$REDIS', failure-policy: allow}
top-keys: {enabled: true}"
tollgate_conf "$WORK/memory.yaml" ""
tollgate_conf "$WORK/redis.yaml" "redis: {uri: 'redis://127.0.0.1:$REDIS', failure-policy: allow}"
await_port "$REDIS"
JAVA_OPTS=(-Xms512m -Xmx512m -XX:+UseParallelGC)
start_tollgate() { # config port jar: one Tollgate JVM at a time, so that two never share the cores
  java "${JAVA_OPTS[@]}" -jar "$3" --config "$1" --port "$2" > "$WORK/tollgate.out" 2> "$WORK/tollgate.err" &
  TOLLGATE=$!
  PIDS+=($TOLLGATE)
  await_port "$2"
  # The JIT needs tens of seconds on two shared cores: measured throughput still climbs for ~30 s
  wrk -t1 -c"$CONNECTIONS" -d25s "http://127.0.0.1:$2/open/x" > /dev/null
  wrk -t1 -c"$CONNECTIONS" -d10s -s "$WORK/check.lua" "http://127.0.0.1:$2/v1/check" > /dev/null
  wrk -t1 -c"$CONNECTIONS" -d5s "http://127.0.0.1:$2/shut/x" > /dev/null
}
start_api() { # config port jar: the decision API alone, warmed as start_tollgate warms it
  java "${JAVA_OPTS[@]}" -jar "$3" --config "$1" --port "$2" > "$WORK/tollgate.out" 2> "$WORK/tollgate.err" &
  TOLLGATE=$!
  PIDS+=($TOLLGATE)
  await_port "$2"
  wrk -t1 -c"$CONNECTIONS" -d25s -s "$WORK/check.lua" "http://127.0.0.1:$2/v1/check" > /dev/null
  wrk -t1 -c"$CONNECTIONS" -d5s "http://127.0.0.1:$2/healthz" > /dev/null
}
stop_tollgate() {
  if grep -q 'degraded="true"' <(curl -s "http://127.0.0.1:$1/metrics" 2>/dev/null || true); then
    echo "warning: some decisions on port $1 were degraded (Redis did not answer within the budget)" >&2
  fi
  kill "$TOLLGATE"
  wait "$TOLLGATE" 2>/dev/null || true
}
for port in "$UPSTREAM" "$NGINX"; do await_port "$port"; done

cat > "$WORK/check.lua" <<'EOF'
-- POST /v1/check for one of 10 000 keys, picked at random
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  return wrk.format(nil, nil, nil, '{"policy":"per-key","key":"k' .. math.random(10000) .. '"}')
end
EOF
cat > "$WORK/check-hot.lua" <<'EOF'
-- POST /v1/check for one hot key
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"policy":"per-key","key":"hot"}'
EOF

# wrk's report: requests/s, p50 and p99 latency, non-2xx count
measure() { # name url [lua]
  local script=()
  [ -n "${3:-}" ] && script=(-s "$3")
  wrk -t1 -c"$CONNECTIONS" -d10s "${script[@]}" "$2" > /dev/null  # warm-up: JIT, pools, keep-alive
  wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" --latency "${script[@]}" "$2" > "$WORK/wrk.txt"
  local rps p50 p99 errors
  rps=$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk.txt")
  p50=$(awk '$1=="50%" {print $2}' "$WORK/wrk.txt")
  p99=$(awk '$1=="99%" {print $2}' "$WORK/wrk.txt")
  errors=$(awk '/Non-2xx/ {print $NF}' "$WORK/wrk.txt")
  printf '| %s | %s | %s | %s | %s |\n' "$1" "$(printf '%.0f' "$rps")" "$p50" "$p99" "${errors:-0}"
}

echo "wrk -t1 -c$CONNECTIONS, ${SECONDS_PER_RUN} s per row after a 10 s warm-up; $(nproc) cores; $(java -version 2>&1 | head -1)"
echo "nginx $(nginx -v 2>&1 | sed 's/.*\///'), redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), wrk $(wrk -v 2>&1 | head -1 | awk '{print $2}')"
echo
echo "| path | requests/s | p50 | p99 | non-2xx |"
echo "| --- | --- | --- | --- | --- |"
measure "upstream alone (nginx return 200)" "http://127.0.0.1:$UPSTREAM/open/x"
if section nginx; then
measure "nginx limit_req proxy, allowing" "http://127.0.0.1:$NGINX/open/x"
measure "nginx limit_req proxy, refusing (429)" "http://127.0.0.1:$NGINX/shut/x"
measure "nginx proxy, no limit_req" "http://127.0.0.1:$NGINX/free/x"
fi
if section proxy; then
for build in "${BUILDS[@]}"; do
label=${build%%=*}; jar=${build#*=}; t=$(tag "$label")
start_tollgate "$WORK/memory.yaml" "$MEMORY" "$jar"
measure "Tollgate proxy$t, in memory, allowing" "http://127.0.0.1:$MEMORY/open/x"
measure "Tollgate proxy$t, in memory, refusing (429)" "http://127.0.0.1:$MEMORY/shut/x"
measure "Tollgate proxy$t, no rule matches (the proxying alone)" "http://127.0.0.1:$MEMORY/free/x"
measure "Tollgate decision API$t, in memory, 10 000 keys" "http://127.0.0.1:$MEMORY/v1/check" "$WORK/check.lua"
measure "Tollgate /healthz$t, in memory (the same server's HTTP alone)" "http://127.0.0.1:$MEMORY/healthz"
stop_tollgate "$MEMORY"
start_tollgate "$WORK/redis.yaml" "$ONREDIS" "$jar"
measure "Tollgate proxy$t, Redis, allowing" "http://127.0.0.1:$ONREDIS/open/x"
measure "Tollgate proxy$t, Redis, refusing (429)" "http://127.0.0.1:$ONREDIS/shut/x"
measure "Tollgate decision API$t, Redis, 10 000 keys" "http://127.0.0.1:$ONREDIS/v1/check" "$WORK/check.lua"
measure "Tollgate /healthz$t, Redis (the same server's HTTP alone)" "http://127.0.0.1:$ONREDIS/healthz"
stop_tollgate "$ONREDIS"
done
fi

# The decision API alone, in memory and on Redis (each build in turn, in an A/B)
# COUNTED=1: each configuration also with top-keys counted, in turn, for the cost of counting (issue #33)
COUNTINGS=("")
[ "${COUNTED:-0}" = 1 ] && COUNTINGS+=("-counted")
if section api; then
for store in memory redis redis-leases; do
  for build in "${BUILDS[@]}"; do
    for counting in "${COUNTINGS[@]}"; do
      [ "$store" = redis-leases ] && [ -n "$counting" ] && continue
      label=${build%%=*}; jar=${build#*=}; t=$(tag "$label")${counting:+, counted}
      API=$(free_port)
      start_api "$WORK/api-$store$counting.yaml" "$API" "$jar"
      measure "decision API alone$t, $store, 10 000 keys" "http://127.0.0.1:$API/v1/check" "$WORK/check.lua"
      measure "decision API alone$t, $store, one hot key" "http://127.0.0.1:$API/v1/check" "$WORK/check-hot.lua"
      [ "$store" = redis-leases ] || measure "/healthz alone$t, $store" "http://127.0.0.1:$API/healthz"
      stop_tollgate "$API"
    done
  done
done
# The ceiling beneath the decision API: Netty's HTTP codec answering 200 at once, no limiter, no JSON
# (HttpStackCeiling netty; skipped without the benchmarks jar)
if [ -f tollgate-benchmarks/target/benchmarks.jar ]; then
  BARE=$(free_port)
  java "${JAVA_OPTS[@]}" -cp tollgate-benchmarks/target/benchmarks.jar io.tollgate.benchmarks.HttpStackCeiling netty \
    "$BARE" > "$WORK/bare.out" 2>&1 &
  BARE_PID=$!
  PIDS+=($BARE_PID)
  await_port "$BARE"
  wrk -t1 -c"$CONNECTIONS" -d15s "http://127.0.0.1:$BARE/x" > /dev/null
  measure "Netty alone, 200 at once (no limiter, no JSON)" "http://127.0.0.1:$BARE/x"
  kill "$BARE_PID"
  wait "$BARE_PID" 2>/dev/null || true
fi
fi

# Forwarding alone, no limiter, one JVM at a time (HttpStackCeiling; skipped without the benchmarks jar):
# where the ceiling of each way of building a JVM proxy lies on this machine.
CEILING_JAR=tollgate-benchmarks/target/benchmarks.jar
if ! section ceiling; then
  :
elif [ -f "$CEILING_JAR" ]; then
  for mode in jetty-proxy jetty-netty-proxy netty-proxy; do
    CEILING=$(free_port)
    java "${JAVA_OPTS[@]}" -cp "$CEILING_JAR" io.tollgate.benchmarks.HttpStackCeiling "$mode" "$CEILING" "$UPSTREAM" \
      > "$WORK/ceiling.out" 2>&1 &
    CEILING_PID=$!
    PIDS+=($CEILING_PID)
    await_port "$CEILING"
    wrk -t1 -c"$CONNECTIONS" -d25s "http://127.0.0.1:$CEILING/x" > /dev/null
    case "$mode" in
      jetty-proxy) name="forwarding only: Jetty ProxyHandler + HttpClient (as Tollgate's proxy)" ;;
      jetty-netty-proxy) name="forwarding only: Jetty server + Netty client, pooled" ;;
      netty-proxy) name="forwarding only: Netty both sides, one event loop per exchange" ;;
    esac
    measure "$name" "http://127.0.0.1:$CEILING/x"
    kill "$CEILING_PID"
    wait "$CEILING_PID" 2>/dev/null || true
  done
else
  echo "(forwarding-only rows skipped: build $CEILING_JAR for them)" >&2
fi
