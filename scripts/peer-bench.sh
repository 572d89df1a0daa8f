#!/usr/bin/env bash
# Kafka's own performance tools and sharebench's equivalents, side by side on
# one broker, interleaved, with a table of records/s and latency and the ratio
# sharebench / Kafka tool.
#
#   scripts/kafka/up
#   scripts/peer-bench.sh                 # table on stdout, progress on stderr
#   PEER_RECORDS=200000 PEER_ROUNDS=1 scripts/peer-bench.sh   # a quick look
#
# Each round, on fresh topics created alike (TopicCommand, PEER_PARTITIONS
# partitions, replication factor 1):
#   produce          org.apache.kafka.tools.ProducerPerformance --throughput -1
#                    vs  sharebench peer produce
#   produce-txn      the same with --transactional-id and
#                    --transaction-duration-ms PEER_TXN_MS
#                    vs  sharebench peer produce --transaction-duration
#   share-consume    org.apache.kafka.tools.ShareConsumerPerformance (one thread)
#                    vs  sharebench peer share-consume, both reading the topic
#                    the Kafka producer wrote, each in a new share group with
#                    share.auto.offset.reset=earliest
# The two tools of a pair run one after the other, Kafka's first in odd
# rounds and sharebench's first in even rounds. Like for like:
#   - Warm-up excluded on both sides. The producers treat the first
#     PEER_WARMUP_RECORDS records as warm-up (ProducerPerformance
#     --warmup-records, sharebench peer produce --warmup-records) and the
#     table reads their steady-state lines, so the JVM's start and JIT
#     warm-up are not inside Kafka's clock. ShareConsumerPerformance has no
#     warm-up option: it prints a progress line a second
#     (--show-detailed-stats), and its steady rate runs from the first line
#     at or past PEER_WARMUP_RECORDS to the last; sharebench peer
#     share-consume --warmup-records times the same stretch itself. The
#     group's forming (seconds, and varying) is outside both clocks.
#   - Both producers are configured as `sharebench run`'s producers are:
#     acks=all, idempotent, linger.ms=PEER_LINGER_MS (0), batch.size
#     PEER_BATCH_BYTES (1000012, franz-go's default), and compression pinned
#     to PEER_COMPRESSION (none) on both sides: ProducerPerformance gets
#     --command-property for each. A random payload per record.
#   - Both consumers use implicit acknowledgement, max.poll.records 500 and
#     the same share.acquire.mode, PEER_ACQUIRE_MODE: batch_optimized,
#     Kafka's client default (a fetch may acquire whole batches past 500),
#     or record_limit, as `sharebench run`'s share workers (a poll never
#     holds more locks than it returns; one round trip per 500 records),
#     and time from subscribe to the last record, as ShareConsumerPerformance
#     does; neither reports a per-record latency, so the share-consume rows
#     show sharebench's poll latency only.
#   - CPU: every run is timed by bash (user + system CPU of the process and
#     its children), reported as CPU-seconds per million records, whole run.
#
# The table shows the median over the rounds; every run's own output is kept
# under PEER_OUT.
#
# Environment (defaults):
#   PEER_BROKERS       127.0.0.1:$KAFKA_PORT (127.0.0.1:9092)
#   PEER_RECORDS       1000000   records per run
#   PEER_RECORD_SIZE   100       bytes per record
#   PEER_PARTITIONS    4
#   PEER_TXN_MS        100       commit interval of the transactional producers
#   PEER_WARMUP_RECORDS  N/5     records treated as warm-up (see above)
#   PEER_COMPRESSION   none      compression.type of both producers
#   PEER_LINGER_MS     0         linger.ms of both producers (run's)
#   PEER_BATCH_BYTES   1000012   batch.size of both producers (run's)
#   PEER_ACQUIRE_MODE  batch_optimized  share.acquire.mode of both consumers
#   PEER_ROUNDS        3
#   PEER_OUT           results/peer-bench-<UTC time>
#   KAFKA_TOOL_HEAP_OPTS  heap of Kafka's tools (-Xmx512m, see scripts/kafka)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=kafka/lib.sh
source scripts/kafka/lib.sh

B="${PEER_BROKERS:-$KAFKA_BOOTSTRAP}"
N="${PEER_RECORDS:-1000000}"
SIZE="${PEER_RECORD_SIZE:-100}"
PARTS="${PEER_PARTITIONS:-4}"
TXN_MS="${PEER_TXN_MS:-100}"
ROUNDS="${PEER_ROUNDS:-3}"
W="${PEER_WARMUP_RECORDS:-$((N / 5))}"
COMP="${PEER_COMPRESSION:-none}"
LINGER="${PEER_LINGER_MS:-0}"
BATCH="${PEER_BATCH_BYTES:-1000012}"
ACQUIRE="${PEER_ACQUIRE_MODE:-batch_optimized}"
OUT="${PEER_OUT:-results/peer-bench-$(date -u +%Y%m%dT%H%M%SZ)}"
RC=scripts/kafka/run-class

log() { printf 'peer-bench: %s\n' "$*" >&2; }
die() { printf 'peer-bench: ERROR: %s\n' "$*" >&2; exit 1; }

for v in N SIZE PARTS TXN_MS ROUNDS W BATCH; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: want a positive integer"
done
[[ "$LINGER" =~ ^[0-9]+$ ]] || die "PEER_LINGER_MS=$LINGER: want a whole number of ms"
(( W < N )) || die "PEER_WARMUP_RECORDS=$W: must be below PEER_RECORDS=$N"
case "$ACQUIRE" in record_limit|batch_optimized) ;; *) die "PEER_ACQUIRE_MODE=$ACQUIRE: want record_limit or batch_optimized" ;; esac
case "$COMP" in none|gzip|snappy|lz4|zstd) ;; *) die "PEER_COMPRESSION=$COMP: want none, gzip, snappy, lz4 or zstd" ;; esac
host="${B%%,*}"
(exec 3<>"/dev/tcp/${host%:*}/${host##*:}") 2>/dev/null \
  || die "nothing answers on $B; start a broker with scripts/kafka/up"

mkdir -p "$OUT"
SB="$OUT/sharebench"
log "building sharebench into $SB"
go build -o "$SB" ./cmd/sharebench

id="peer$(date +%s)"
cleanup() {
  "$RC" org.apache.kafka.tools.TopicCommand --bootstrap-server "$B" --delete --topic "${id}-.*" \
    >/dev/null 2>&1 || true
}
trap cleanup EXIT

# run NAME CMD...: run one benchmark, keep its output in $OUT/NAME.txt and
# its CPU time (user and system seconds, the process and its children) in
# $OUT/NAME.cpu.
run() {
  local name="$1"; shift
  log "$name: $*"
  local TIMEFORMAT='%3U %3S' rc=0
  { time "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err" || rc=$?; } 2>"$OUT/$name.cpu"
  if (( rc != 0 )); then
    tail -n 20 "$OUT/$name.err" >&2
    die "$name failed (output in $OUT/$name.txt, $OUT/$name.err)"
  fi
}

topic() {
  "$RC" org.apache.kafka.tools.TopicCommand --bootstrap-server "$B" --create --topic "$1" \
    --partitions "$PARTS" --replication-factor 1 >/dev/null
}

kafka_produce() { # name topic [txn]
  local extra=()
  [[ "${3:-}" == txn ]] && extra=(--transactional-id "$2" --transaction-duration-ms "$TXN_MS")
  run "$1" "$RC" org.apache.kafka.tools.ProducerPerformance --bootstrap-server "$B" --topic "$2" \
    --num-records "$N" --record-size "$SIZE" --throughput -1 --warmup-records "$W" \
    --command-property "compression.type=$COMP" --command-property "linger.ms=$LINGER" \
    --command-property "batch.size=$BATCH" "${extra[@]}"
}
sb_produce() { # name topic [txn]
  local extra=()
  [[ "${3:-}" == txn ]] && extra=(--transactional-id "$2" --transaction-duration "${TXN_MS}ms")
  run "$1" "$SB" peer produce --brokers "$B" --topic "$2" --num-records "$N" --record-size "$SIZE" \
    --warmup-records "$W" --compression "$COMP" --linger "${LINGER}ms" --batch-max-bytes "$BATCH" "${extra[@]}"
}
kafka_consume() { # name topic group [records]
  "$RC" org.apache.kafka.tools.ConfigCommand --bootstrap-server "$B" --alter --entity-type groups \
    --entity-name "$3" --add-config share.auto.offset.reset=earliest >/dev/null
  run "$1" "$RC" org.apache.kafka.tools.ShareConsumerPerformance --bootstrap-server "$B" --topic "$2" \
    --group "$3" --num-records "$N" --timeout 30000 --show-detailed-stats --reporting-interval 1000 \
    --command-property max.poll.records=500 --command-property share.acquire.mode="$ACQUIRE"
}
sb_consume() { # name topic group [records]
  run "$1" "$SB" peer share-consume --brokers "$B" --topic "$2" --group "$3" --num-records "$N" --timeout 30s \
    --max-poll-records 500 --acquire-mode "$ACQUIRE" --warmup-records "$W"
}

# pair FIRST-FUNC ARGS -- SECOND-FUNC ARGS, in the round's order.
pair() {
  local round="$1"; shift
  local a=() b=()
  while [[ "$1" != -- ]]; do a+=("$1"); shift; done
  shift
  b=("$@")
  if (( round % 2 == 1 )); then "${a[@]}"; "${b[@]}"; else "${b[@]}"; "${a[@]}"; fi
}

log "broker $B; $ROUNDS rounds of $N records x $SIZE bytes on $PARTS partitions; transactions commit every ${TXN_MS} ms; output in $OUT"
start=$SECONDS
for r in $(seq 1 "$ROUNDS"); do
  t="${id}-r${r}"
  for s in k s kx sx; do topic "$t-$s"; done
  pair "$r" kafka_produce "r$r-produce-kafka" "$t-k" -- sb_produce "r$r-produce-sharebench" "$t-s"
  pair "$r" kafka_produce "r$r-produce-txn-kafka" "$t-kx" txn -- sb_produce "r$r-produce-txn-sharebench" "$t-sx" txn
  pair "$r" kafka_consume "r$r-share-consume-kafka" "$t-k" "$t-gk" -- sb_consume "r$r-share-consume-sharebench" "$t-k" "$t-gs"
  "$RC" org.apache.kafka.tools.TopicCommand --bootstrap-server "$B" --delete --topic "${t}-.*" >/dev/null 2>&1 || true
done
log "done in $((SECONDS - start))s"

# --- Parse ------------------------------------------------------------------
# produce: the "N steady state records sent, R records/sec (M MB/sec), A ms
# avg latency, X ms max latency, P50 ms 50th, P95 ms 95th, P99 ms 99th, P999
# ms 99.9th." line both producers print after the whole run's line (the
# warm-up records excluded). Prints "records/s p50 p99".
parse_produce() {
  grep 'steady state records sent' "$1" | tail -n 1 | sed -E 's/^([0-9]+) steady state records sent, ([0-9.]+) records\/sec .* ([0-9.]+) ms 50th, ([0-9.]+) ms 95th, ([0-9.]+) ms 99th.*/\2 \3 \5/; t; s/.*/- - -/' \
    | awk '{print $1, $2, $3}'
}
# share-consume: the steady rate after the first W records, from the
# first progress line at or past W to the last one, so the group's forming
# and the JVM's start are outside it. ShareConsumerPerformance's
# --show-detailed-stats lines are "start, end, MB, MB/s, nMsg/s, records so
# far, interval ms for share consumer 1" (end as yyyy-MM-dd HH:mm:ss:SSS),
# and its last line, the whole run's, ends at the last record;
# sharebench peer share-consume --warmup-records prints its own steady-state
# line and its poll latency. Prints "records/s p50 p99 count".
parse_consume() { # file
  local p50=- p99=- rate count
  if grep -q 'poll p50' "$1"; then
    p50="$(sed -nE 's/.*poll p50 ([0-9.]+) ms.*/\1/p' "$1")"
    p99="$(sed -nE 's/.*poll p50 [0-9.]+ ms, p99 ([0-9.]+) ms.*/\1/p' "$1")"
    rate="$(sed -nE 's/^sharebench: steady state after [0-9]+ warm-up records: ([0-9.]+) records\/s.*/\1/p' "$1")"
    count="$(grep -E '^[0-9]{4}-[0-9]{2}-[0-9]{2} ' "$1" | tail -n 1 | awk -F', ' '{print $6}')"
    echo "${rate:--} $p50 $p99 ${count:-0}"
    return
  fi
  grep -E '^[0-9]{4}-[0-9]{2}-[0-9]{2} ' "$1" | awk -F', ' -v w="$W" '
    function ms(ts,   a, b) { split(ts, a, " "); split(a[2], b, ":"); return ((b[1] * 60 + b[2]) * 60 + b[3]) * 1000 + b[4] }
    { n = $6 + 0; t = ms($2); if (!seen && n >= w) { seen = 1; n0 = n; t0 = t } last = n; tl = t }
    END { r = (seen && tl > t0 && last > n0) ? (last - n0) / ((tl - t0) / 1000) : "-"; printf "%s - - %d\n", r, last }'
}
# cpu_per_m NAME: CPU-seconds per million records of one run.
cpu_per_m() { awk -v n="$N" '{ printf "%.3f\n", ($1 + $2) / n * 1e6 }' "$OUT/$1.cpu"; }

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) {print "-"; exit} if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# col TEST TOOL FIELD: the median of one field over the rounds.
col() {
  local test="$1" tool="$2" field="$3" r
  for r in $(seq 1 "$ROUNDS"); do
    if [[ "$test" == share-consume ]]; then parse_consume "$OUT/r$r-$test-$tool.txt"; else parse_produce "$OUT/r$r-$test-$tool.txt"; fi
  done | awk -v f="$field" '$f != "-" {print $f}' | median
}
# cpu TEST TOOL: the median CPU-seconds per million records over the rounds.
cpu() {
  local r
  for r in $(seq 1 "$ROUNDS"); do cpu_per_m "r$r-$1-$2"; done | median
}

for r in $(seq 1 "$ROUNDS"); do
  for tool in kafka sharebench; do
    got="$(parse_consume "$OUT/r$r-share-consume-$tool.txt" | awk '{print $4}')"
    [[ "$got" == "$N" ]] || log "WARNING: round $r share-consume $tool read ${got:-?} of $N records"
  done
done

fmt() { awk -v v="$1" 'BEGIN { if (v == "-") print "-"; else if (v >= 1000) printf "%.0f", v; else printf "%.3g", v }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f×", a / b }'; }

{
  printf '\n%s\n\n' "Kafka $KAFKA_VERSION tools vs sharebench on $B: $N records × $SIZE B ($W of them warm-up, excluded), $PARTS partitions, compression $COMP, linger.ms $LINGER, batch.size $BATCH, transactions every ${TXN_MS} ms, share.acquire.mode $ACQUIRE; median of $ROUNDS interleaved rounds"
  printf '| test | Kafka tool | records/s | sharebench | records/s | ratio sb/Kafka | Kafka p50 / p99 ms | sharebench p50 / p99 ms | CPU-s per 1M records Kafka / sharebench |\n'
  printf '|---|---|---:|---|---:|---:|---:|---:|---:|\n'
  for test in produce produce-txn share-consume; do
    case "$test" in
      produce) kt=ProducerPerformance; st="peer produce" ;;
      produce-txn) kt="ProducerPerformance --transaction-duration-ms $TXN_MS"; st="peer produce --transaction-duration ${TXN_MS}ms" ;;
      share-consume) kt=ShareConsumerPerformance; st="peer share-consume" ;;
    esac
    kr="$(col "$test" kafka 1)"; sr="$(col "$test" sharebench 1)"
    kl="$(fmt "$(col "$test" kafka 2)") / $(fmt "$(col "$test" kafka 3)")"
    sl="$(fmt "$(col "$test" sharebench 2)") / $(fmt "$(col "$test" sharebench 3)")"
    [[ "$test" == share-consume ]] && { kl="n/a"; sl="$sl (poll)"; }
    kc="$(cpu "$test" kafka)"; sc="$(cpu "$test" sharebench)"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |\n' "$test" "$kt" "$(fmt "$kr")" "$st" "$(fmt "$sr")" "$(ratio "$sr" "$kr")" "$kl" "$sl" "$kc" "$sc"
  done
  printf '\nPer round (records/s, Kafka tool / sharebench):\n\n'
  for r in $(seq 1 "$ROUNDS"); do
    printf 'round %s:' "$r"
    for test in produce produce-txn share-consume; do
      for tool in kafka sharebench; do
        if [[ "$test" == share-consume ]]; then v="$(parse_consume "$OUT/r$r-$test-$tool.txt" | awk '{print $1}')"
        else v="$(parse_produce "$OUT/r$r-$test-$tool.txt" | awk '{print $1}')"; fi
        printf ' %s-%s %s' "$test" "$tool" "$(fmt "$v")"
      done
    done
    printf '\n'
  done
  printf '\nOutputs: %s\n' "$OUT"
} | tee "$OUT/table.md"
