#!/usr/bin/env bash
# The same sharebench run through the kafka target against three clusters,
# side by side in one run: `sharebench serve` (the reference engine over the
# Kafka protocol, its own process), a real Kafka broker (scripts/kafka/up,
# its own JVM) and the embedded kfake cluster (inside the load generator's
# process). A table of records/s per mode, the ratios serve / Kafka and
# serve / kfake, and CPU per record of the client and of each server.
#
#   scripts/serve-bench.sh                           # table on stdout, progress on stderr
#   SB_MODES=classic-eos SB_DURATION=10s SB_ROUNDS=1 scripts/serve-bench.sh
#   SB_KAFKA=off scripts/serve-bench.sh              # serve and kfake only
#
# Each round runs every mode on every cluster, one run after the other, the
# cluster order rotating from round to round (serve, Kafka, kfake; then
# Kafka, kfake, serve; ...), with one seed for all runs of a round. Every
# run is `sharebench run --target kafka --workload SB_WORKLOAD --modes MODE
# --duration SB_DURATION --seed S` and must pass its verifier; the table
# shows the median over the rounds. Kafka and kfake have no transactional
# mode (no broker has KIP-1289): their cells are "—".
#
# CPU per record (µs): client is the load generator's CPU inside the
# measurement window (result.json cpu_ns) per record of the window; for
# kfake this includes the cluster, which shares the process. server is
# the server process's user + system CPU over the whole run (set-up, load,
# drain, verification; from /proc), per input record of the run.
#
# Environment (defaults):
#   SB_WORKLOAD   ctp-throughput
#   SB_MODES      implicit,explicit,deferred,transactional,classic-eos
#   SB_DURATION   10s       measurement window per run
#   SB_ROUNDS     1
#   SB_SEED       1         seed of round 1 (round r uses SB_SEED + r - 1)
#   SB_SERVE_ADDR 127.0.0.1:39100   where the script starts serve (in memory)
#   SB_KAFKA      on        off: no Kafka column
#   KAFKA_PORT, KAFKA_CONTROLLER_PORT  39092, 39093: the broker this script
#                 starts with scripts/kafka/up and stops at the end (one
#                 already up on those ports is used and left running)
#   SB_OUT        results/serve-bench-<UTC time>
set -euo pipefail
cd "$(dirname "$0")/.."
export KAFKA_PORT="${KAFKA_PORT:-39092}" KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-39093}"

WORKLOAD="${SB_WORKLOAD:-ctp-throughput}"
MODES="${SB_MODES:-implicit,explicit,deferred,transactional,classic-eos}"
DURATION="${SB_DURATION:-10s}"
ROUNDS="${SB_ROUNDS:-1}"
SEED="${SB_SEED:-1}"
SERVE_ADDR="${SB_SERVE_ADDR:-127.0.0.1:39100}"
KAFKA="${SB_KAFKA:-on}"
OUT="${SB_OUT:-results/serve-bench-$(date -u +%Y%m%dT%H%M%SZ)}"

log() { printf 'serve-bench: %s\n' "$*" >&2; }
die() { printf 'serve-bench: ERROR: %s\n' "$*" >&2; exit 1; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "SB_ROUNDS=$ROUNDS: want a positive integer"
[[ "$SEED" =~ ^[0-9]+$ ]] || die "SB_SEED=$SEED: want a whole number"
case "$KAFKA" in on|off) ;; *) die "SB_KAFKA=$KAFKA: want on or off" ;; esac

mkdir -p "$OUT"
SB="$OUT/sharebench"
log "building sharebench into $SB"
go build -o "$SB" ./cmd/sharebench

serve_pid="" kafka_started=""
cleanup() {
  if [[ -n "$serve_pid" ]]; then kill -TERM "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
  if [[ -n "$kafka_started" ]]; then scripts/kafka/down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

"$SB" serve --listen "$SERVE_ADDR" >"$OUT/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/${SERVE_ADDR%:*}/${SERVE_ADDR##*:}") 2>/dev/null && break; sleep 0.1; done
kill -0 "$serve_pid" 2>/dev/null || die "serve did not start: $(cat "$OUT/serve.log")"
log "serve on $SERVE_ADDR (pid $serve_pid)"

clusters=(serve kfake)
kafka_pid=""
if [[ "$KAFKA" == on ]]; then
  if ! (exec 3<>"/dev/tcp/127.0.0.1/${KAFKA_PORT}") 2>/dev/null; then
    log "starting Kafka on 127.0.0.1:$KAFKA_PORT (controller $KAFKA_CONTROLLER_PORT)"
    scripts/kafka/up >"$OUT/kafka-up.log" 2>&1 || die "scripts/kafka/up failed: $(tail -5 "$OUT/kafka-up.log")"
    kafka_started=1
  fi
  kafka_pid="$(cat "${KAFKA_RUN_DIR:-scripts/kafka/.run}/node-1/kafka.pid" 2>/dev/null || true)"
  clusters=(serve kafka kfake)
fi

# cpu_ticks PID: user + system CPU of PID in clock ticks (0 without a PID).
cpu_ticks() {
  [[ -n "$1" && -r "/proc/$1/stat" ]] || { echo 0; return; }
  awk '{print $14 + $15}' "/proc/$1/stat"
}
HZ="$(getconf CLK_TCK)"

# run CLUSTER MODE ROUND: one run; appends "cluster mode round rate client_us server_us" to $OUT/runs.
run() {
  local cluster="$1" mode="$2" round="$3" seed=$((SEED + round - 1)) brokers=() pid=""
  case "$cluster" in
    serve) brokers=(--brokers "$SERVE_ADDR"); pid="$serve_pid" ;;
    kafka) brokers=(--brokers "127.0.0.1:$KAFKA_PORT"); pid="$kafka_pid" ;;
    kfake) ;;
  esac
  if [[ "$mode" == transactional && "$cluster" != serve ]]; then
    echo "$cluster $mode $round - - -" >>"$OUT/runs"; return
  fi
  local dir="$OUT/$cluster-$mode-$round" before after rc=0
  before="$(cpu_ticks "$pid")"
  log "round $round: $mode on $cluster"
  "$SB" run --target kafka "${brokers[@]}" --workload "$WORKLOAD" --modes "$mode" \
    --duration "$DURATION" --seed "$seed" --quiet --out "$dir" >"$dir.txt" 2>&1 || rc=$?
  after="$(cpu_ticks "$pid")"
  (( rc == 0 )) || die "$mode on $cluster failed (exit $rc; $dir.txt): $(tail -5 "$dir.txt")"
  python3 - "$dir/result.json" "$cluster" "$mode" "$round" "$((after - before))" "$HZ" "$pid" >>"$OUT/runs" <<'EOF'
import json, sys
path, cluster, mode, rnd, ticks, hz, pid = sys.argv[1:]
m = json.load(open(path))["modes"][0]
recs = m["throughput"] * m["measured_ns"] / 1e9
client = m["cpu_ns"] / 1e3 / recs if recs else 0
server = "-" if not pid else "%.2f" % (int(ticks) / int(hz) * 1e6 / max(m["total_inputs"], 1))
print(cluster, mode, rnd, "%.0f" % m["throughput"], "%.2f" % client, server)
EOF
}

: >"$OUT/runs"
IFS=, read -r -a modes <<<"$MODES"
for round in $(seq 1 "$ROUNDS"); do
  n=${#clusters[@]}
  order=()
  for i in $(seq 0 $((n - 1))); do order+=("${clusters[$(((i + round - 1) % n))]}"); done
  for mode in "${modes[@]}"; do
    for cluster in "${order[@]}"; do run "$cluster" "$mode" "$round"; done
  done
done

python3 - "$OUT/runs" "$MODES" "$KAFKA" "$WORKLOAD" "$DURATION" "$ROUNDS" <<'EOF'
import sys, statistics
runs, modes, kafka, workload, duration, rounds = sys.argv[1:]
rows = {}
for line in open(runs):
    c, m, r, rate, cl, sv = line.split()
    rows.setdefault((c, m), []).append((rate, cl, sv))
def med(c, m, i):
    v = [float(x[i]) for x in rows.get((c, m), []) if x[i] != "-"]
    return statistics.median(v) if v else None
def f(v, fmt="{:,.0f}"):
    return "—" if v is None else fmt.format(v).replace(",", " ")
cl = ["serve", "kafka", "kfake"] if kafka == "on" else ["serve", "kfake"]
name = {"serve": "serve", "kafka": "Kafka", "kfake": "kfake"}
print(f"workload {workload}, {duration} per run, median of {rounds} round(s); records/s; CPU µs per record (client in the window / server over the run)")
head = "| mode | " + " | ".join(name[c] for c in cl) + " | " + " | ".join("serve / " + name[c] for c in cl[1:]) + " | " + " | ".join("CPU " + name[c] for c in cl) + " |"
print(head)
print("|---|" + "---:|" * (head.count("|") - 2))
for m in modes.split(","):
    rate = {c: med(c, m, 0) for c in cl}
    ratios = [f(rate["serve"] / rate[c], "{:.2f}×") if rate["serve"] and rate[c] else "" for c in cl[1:]]
    cpus = []
    for c in cl:
        a, b = med(c, m, 1), med(c, m, 2)
        cpus.append("—" if a is None else f(a, "{:.1f}") + (" / " + f(b, "{:.1f}") if b is not None else ""))
    print("| " + m + " | " + " | ".join(f(rate[c]) for c in cl) + " | " + " | ".join(ratios) + " | " + " | ".join(cpus) + " |")
EOF
log "runs in $OUT"
