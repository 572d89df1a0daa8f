# shellcheck shell=bash disable=SC2034  # variables are used by the scripts that source this
# Shared settings for scripts/kafka/{up,down,control,run-class}. Sourced, not executed.
#
# Environment (all optional):
#   KAFKA_VERSION          Kafka release on Maven Central          (4.4.0)
#   KAFKA_NODES            nodes of the cluster (up --nodes N)      (1)
#   KAFKA_PORT             PLAINTEXT listener of node 1 on 127.0.0.1 (9092);
#                          node i listens on KAFKA_PORT + 2(i-1)
#   KAFKA_CONTROLLER_PORT  CONTROLLER listener of node 1            (9093);
#                          node i on KAFKA_CONTROLLER_PORT + 2(i-1)
#   KAFKA_SECURITY         plaintext, or sasl_ssl (up --security): a SASL_SSL
#                          client listener beside PLAINTEXT     (plaintext)
#   KAFKA_SECURE_PORT      SASL_SSL listener of node 1 (KAFKA_PORT + 2N);
#                          node i on KAFKA_SECURE_PORT + 2(i-1)
#   KAFKA_RUN_DIR          pids, configs, state, logs of a cluster  (scripts/kafka/.run)
#   KAFKA_DATA_DIR         holds each node's log.dirs, node-<i>/  (KAFKA_RUN_DIR/data)
#   KAFKA_HEAP_OPTS        heap of each broker                      (-Xms256m -Xmx1g)
#   KAFKA_TOOL_HEAP_OPTS   heap for run-class tools                 (-Xmx512m)
#   KAFKA_OPTS             extra JVM options (broker and tools)
#   KAFKA_LOG_LEVEL        log4j2 root level: broker INFO, tools WARN
#   KAFKA_START_TIMEOUT    seconds ./up waits for the broker        (90)
#   JAVA_HOME / JAVA       which java to run

KAFKA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KAFKA_VERSION="${KAFKA_VERSION:-4.4.0}"
KAFKA_NODES="${KAFKA_NODES:-1}"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
KAFKA_SECURITY="${KAFKA_SECURITY:-plaintext}"
KAFKA_SECURE_PORT="${KAFKA_SECURE_PORT:-}"
KAFKA_HOST=127.0.0.1
KAFKA_BOOTSTRAP="${KAFKA_HOST}:${KAFKA_PORT}"
KAFKA_RUN_DIR="${KAFKA_RUN_DIR:-${KAFKA_DIR}/.run}"
KAFKA_DATA_DIR="${KAFKA_DATA_DIR:-${KAFKA_RUN_DIR}/data}"
KAFKA_CACHE_DIR="${KAFKA_DIR}/.cache/${KAFKA_VERSION}"
KAFKA_LIBS_DIR="${KAFKA_CACHE_DIR}/libs"
KAFKA_CLASSPATH_FILE="${KAFKA_CACHE_DIR}/classpath.txt"
KAFKA_STATE_FILE="${KAFKA_RUN_DIR}/state"
KAFKA_LOG_DIR="${KAFKA_RUN_DIR}/logs"
KAFKA_LOG4J_CONFIG="${KAFKA_DIR}/log4j2.properties"
KAFKA_DATA_MARKER=".sharebench-kafka-data"
# What up --security sasl_ssl makes: the private CA, the broker's key store,
# the client trust stores and the users' passwords under secure/, and the
# client property files beside it.
KAFKA_SECURE_DIR="${KAFKA_RUN_DIR}/secure"

if [[ -n "${JAVA:-}" ]]; then
  :
elif [[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/java" ]]; then
  JAVA="${JAVA_HOME}/bin/java"
else
  JAVA=java
fi

kafka_log() { printf 'kafka: %s\n' "$*" >&2; }
kafka_die() { printf 'kafka: ERROR: %s\n' "$*" >&2; exit 1; }

# Resolve the Kafka runtime classpath from Maven Central once per version into
# .cache/<version>/libs; afterwards everything runs offline from that copy.
kafka_ensure_jars() {
  if [[ -s "$KAFKA_CLASSPATH_FILE" ]]; then
    local jar missing=0
    while IFS= read -r jar; do
      [[ -f "$jar" ]] || { missing=1; break; }
    done < <(tr ':' '\n' < "$KAFKA_CLASSPATH_FILE")
    [[ $missing -eq 0 ]] && return 0
    # A cache copied from another checkout names that checkout's jars:
    # list the ones here instead, if they are all present.
    if compgen -G "${KAFKA_LIBS_DIR}/kafka_2.13-${KAFKA_VERSION}.jar" >/dev/null; then
      printf '%s\n' "$KAFKA_LIBS_DIR"/*.jar | paste -sd: - > "${KAFKA_CLASSPATH_FILE}.tmp"
      mv "${KAFKA_CLASSPATH_FILE}.tmp" "$KAFKA_CLASSPATH_FILE"
      return 0
    fi
    kafka_log "cached classpath for $KAFKA_VERSION is incomplete; fetching again"
  fi
  command -v mvn >/dev/null 2>&1 || kafka_die "mvn not found (needed once to fetch Kafka $KAFKA_VERSION jars)"
  command -v "$JAVA" >/dev/null 2>&1 || kafka_die "java not found (set JAVA_HOME)"
  kafka_log "fetching Kafka $KAFKA_VERSION jars from Maven Central into ${KAFKA_CACHE_DIR#"$KAFKA_DIR"/} (once)"
  mkdir -p "$KAFKA_CACHE_DIR"
  local tmp="${KAFKA_CACHE_DIR}/libs.tmp.$$"
  rm -rf "$tmp"
  local mvnlog="${KAFKA_CACHE_DIR}/mvn.log"
  if ! mvn -q -B -f "${KAFKA_DIR}/pom.xml" -Dkafka.version="$KAFKA_VERSION" \
        dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" >"$mvnlog" 2>&1; then
    rm -rf "$tmp"
    tail -n 30 "$mvnlog" >&2
    kafka_die "mvn could not resolve org.apache.kafka:kafka_2.13/kafka-tools:$KAFKA_VERSION (does that version exist on Maven Central?)"
  fi
  ls "$tmp"/kafka_2.13-"$KAFKA_VERSION".jar "$tmp"/kafka-tools-"$KAFKA_VERSION".jar >/dev/null 2>&1 \
    || { rm -rf "$tmp"; kafka_die "Kafka jars missing after mvn copy-dependencies"; }
  rm -rf "$KAFKA_LIBS_DIR"
  mv "$tmp" "$KAFKA_LIBS_DIR"
  printf '%s\n' "$KAFKA_LIBS_DIR"/*.jar | paste -sd: - > "${KAFKA_CLASSPATH_FILE}.tmp"
  mv "${KAFKA_CLASSPATH_FILE}.tmp" "$KAFKA_CLASSPATH_FILE"
}

kafka_classpath() { cat "$KAFKA_CLASSPATH_FILE"; }

# True if something accepts TCP connections on 127.0.0.1:$1.
kafka_port_open() { (exec 3<>"/dev/tcp/${KAFKA_HOST}/$1") 2>/dev/null; }

# True if $1 is a live pid whose command line is our broker.
kafka_pid_is_broker() {
  local pid="$1"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'
}

# --- Nodes ---------------------------------------------------------------------
# Node i (1..N) has its broker on KAFKA_PORT + 2(i-1), its controller on
# KAFKA_CONTROLLER_PORT + 2(i-1), its config and pid under .run/node-<i>/,
# its data under $KAFKA_DATA_DIR/node-<i>, and one log file per start under
# .run/logs/node-<i>/ (never overwritten; .run/node-<i>/server.log links to
# the current one).
kafka_node_port()            { echo $(( KAFKA_PORT + 2 * ($1 - 1) )); }
kafka_node_controller_port() { echo $(( KAFKA_CONTROLLER_PORT + 2 * ($1 - 1) )); }
# The SASL_SSL port of node $1 (up --security sasl_ssl): after the N
# PLAINTEXT ports, so one port and a node count give them all.
kafka_node_secure_port()     { echo $(( ${KAFKA_SECURE_PORT:-$(( KAFKA_PORT + 2 * KAFKA_NODES ))} + 2 * ($1 - 1) )); }
kafka_node_dir()             { echo "${KAFKA_RUN_DIR}/node-$1"; }
kafka_node_data()            { echo "${KAFKA_DATA_DIR}/node-$1"; }
kafka_node_pid_file()        { echo "$(kafka_node_dir "$1")/kafka.pid"; }
kafka_node_config()          { echo "$(kafka_node_dir "$1")/server.properties"; }
kafka_node_log()             { echo "$(kafka_node_dir "$1")/server.log"; }
kafka_bootstrap_list() {
  local i out=""
  for ((i = 1; i <= KAFKA_NODES; i++)); do out+="${out:+,}${KAFKA_HOST}:$(kafka_node_port "$i")"; done
  echo "$out"
}
kafka_secure_bootstrap_list() {
  local i out=""
  for ((i = 1; i <= KAFKA_NODES; i++)); do out+="${out:+,}${KAFKA_HOST}:$(kafka_node_secure_port "$i")"; done
  echo "$out"
}

# The settings up recorded (state file) win over the environment, so down
# and control act on the cluster that is there.
kafka_load_state() {
  [[ -f "$KAFKA_STATE_FILE" ]] || return 1
  local v
  v="$(sed -n 's/^version=//p' "$KAFKA_STATE_FILE")";         [[ -n "$v" ]] && KAFKA_VERSION="$v"
  v="$(sed -n 's/^nodes=//p' "$KAFKA_STATE_FILE")";           [[ -n "$v" ]] && KAFKA_NODES="$v"
  v="$(sed -n 's/^port=//p' "$KAFKA_STATE_FILE")";            [[ -n "$v" ]] && KAFKA_PORT="$v"
  v="$(sed -n 's/^controller_port=//p' "$KAFKA_STATE_FILE")"; [[ -n "$v" ]] && KAFKA_CONTROLLER_PORT="$v"
  v="$(sed -n 's/^data_dir=//p' "$KAFKA_STATE_FILE")";        [[ -n "$v" ]] && KAFKA_DATA_DIR="$v"
  # A plaintext cluster's state has no security lines.
  v="$(sed -n 's/^security=//p' "$KAFKA_STATE_FILE")";        KAFKA_SECURITY="${v:-plaintext}"
  v="$(sed -n 's/^secure_port=//p' "$KAFKA_STATE_FILE")";     [[ -n "$v" ]] && KAFKA_SECURE_PORT="$v"
  KAFKA_CACHE_DIR="${KAFKA_DIR}/.cache/${KAFKA_VERSION}"
  KAFKA_LIBS_DIR="${KAFKA_CACHE_DIR}/libs"
  KAFKA_CLASSPATH_FILE="${KAFKA_CACHE_DIR}/classpath.txt"
  KAFKA_BOOTSTRAP="${KAFKA_HOST}:${KAFKA_PORT}"
  return 0
}

# The pid of node $1 if it is our running broker (also while SIGSTOPped).
kafka_node_pid() {
  local f pid
  f="$(kafka_node_pid_file "$1")"
  [[ -s "$f" ]] || return 0
  pid="$(cat "$f")"
  if kafka_pid_is_broker "$pid"; then echo "$pid"; fi
}

# Start node $1's JVM on its formatted data dir; its output goes to a new
# log file of its own. The JVM runs in a session of its own (setsid): a
# caller that kills its command's process group on a timeout (sharebench's
# broker control does) ends the command, never the broker it started.
kafka_start_node() {
  local i="$1" dir log n
  dir="$(kafka_node_dir "$i")"
  mkdir -p "$dir" "${KAFKA_LOG_DIR}/node-$i"
  n=$(( $(find "${KAFKA_LOG_DIR}/node-$i" -maxdepth 1 -name 'start-*.log' | wc -l) + 1 ))
  log="${KAFKA_LOG_DIR}/node-$i/start-$(printf '%03d' "$n")-$(date -u +%Y%m%dT%H%M%SZ).log"
  printf '===== %s: starting Kafka %s node %s on %s:%s =====\n' "$(date -Is)" "$KAFKA_VERSION" "$i" "$KAFKA_HOST" "$(kafka_node_port "$i")" > "$log"
  ln -sfn "$log" "$(kafka_node_log "$i")"
  # shellcheck disable=SC2086
  setsid nohup "$JAVA" ${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g} \
    -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
    -XX:+ExplicitGCInvokesConcurrent -XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath="$dir" \
    -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$KAFKA_LOG4J_CONFIG" \
    -Dkafka.log.level="${KAFKA_LOG_LEVEL:-INFO}" \
    ${KAFKA_OPTS:-} \
    -cp "$(kafka_classpath)" kafka.Kafka "$(kafka_node_config "$i")" \
    </dev/null >>"$log" 2>&1 21>&- 22>&- 23>&- 24>&- 25>&- 26>&- 27>&- 28>&- 29>&- &
  echo $! > "$(kafka_node_pid_file "$i")"
  kafka_log "node $i: started pid $! (log: ${log#"$KAFKA_DIR"/})"
}

# Wait until node $1 serves requests: a KRaft broker opens its PLAINTEXT
# port only once the controller has unfenced it ("Enabling request
# processing"), so an open port means it is a live member of the cluster.
kafka_wait_node() {
  local i="$1" timeout="${2:-${KAFKA_START_TIMEOUT:-90}}" port pid
  port="$(kafka_node_port "$i")"
  local deadline=$((SECONDS + timeout))
  while (( SECONDS < deadline )); do
    # kill -0, not the command-line check of kafka_node_pid: just after the
    # start the process may still be the shell that is about to exec java.
    pid="$(cat "$(kafka_node_pid_file "$i")" 2>/dev/null || true)"
    [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || { kafka_log "node $i: the broker process exited during startup (log: $(readlink -f "$(kafka_node_log "$i")"))"; return 1; }
    kafka_port_open "$port" && return 0
    sleep 0.25
  done
  kafka_log "node $i: did not answer on ${KAFKA_HOST}:${port} within ${timeout}s (log: $(readlink -f "$(kafka_node_log "$i")"))"
  return 1
}

# Stop node $1: SIGCONT (a paused broker cannot shut down), SIGTERM (a
# controlled shutdown), SIGKILL after KAFKA_STOP_TIMEOUT seconds.
kafka_stop_node() {
  local i="$1" pid
  pid="$(kafka_node_pid "$i")"
  if [[ -z "$pid" ]]; then rm -f "$(kafka_node_pid_file "$i")"; return 0; fi
  local t="${KAFKA_STOP_TIMEOUT:-30}"
  kafka_log "node $i: stopping pid $pid (SIGTERM, up to ${t}s)"
  kill -CONT "$pid" 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + t))
  while kill -0 "$pid" 2>/dev/null && (( SECONDS < deadline )); do sleep 0.25; done
  if kill -0 "$pid" 2>/dev/null; then
    kafka_log "node $i: pid $pid still alive after ${t}s; SIGKILL"
    kafka_kill_node "$i"
  fi
  rm -f "$(kafka_node_pid_file "$i")"
}

# SIGKILL node $1 (a crash) and wait until the process is gone.
kafka_kill_node() {
  local i="$1" pid
  pid="$(kafka_node_pid "$i")"
  [[ -n "$pid" ]] || return 0
  kill -KILL "$pid" 2>/dev/null || true
  for _ in $(seq 1 80); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -0 "$pid" 2>/dev/null && kafka_die "node $i: pid $pid survived SIGKILL"
  rm -f "$(kafka_node_pid_file "$i")"
}
