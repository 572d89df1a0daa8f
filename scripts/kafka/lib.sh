# shellcheck shell=bash disable=SC2034  # variables are used by the scripts that source this
# Shared settings for scripts/kafka/{up,down,run-class}. Sourced, not executed.
#
# Environment (all optional):
#   KAFKA_VERSION          Kafka release on Maven Central          (4.4.0)
#   KAFKA_PORT             PLAINTEXT listener on 127.0.0.1         (9092)
#   KAFKA_CONTROLLER_PORT  CONTROLLER listener on 127.0.0.1        (9093)
#   KAFKA_DATA_DIR         log.dirs / metadata dir                  (scripts/kafka/.run/data)
#   KAFKA_HEAP_OPTS        broker heap                              (-Xms256m -Xmx1g)
#   KAFKA_TOOL_HEAP_OPTS   heap for run-class tools                 (-Xmx512m)
#   KAFKA_OPTS             extra JVM options (broker and tools)
#   KAFKA_LOG_LEVEL        log4j2 root level: broker INFO, tools WARN
#   KAFKA_START_TIMEOUT    seconds ./up waits for the broker        (90)
#   JAVA_HOME / JAVA       which java to run

KAFKA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KAFKA_VERSION="${KAFKA_VERSION:-4.4.0}"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
KAFKA_HOST=127.0.0.1
KAFKA_BOOTSTRAP="${KAFKA_HOST}:${KAFKA_PORT}"
KAFKA_RUN_DIR="${KAFKA_DIR}/.run"
KAFKA_DATA_DIR="${KAFKA_DATA_DIR:-${KAFKA_RUN_DIR}/data}"
KAFKA_CACHE_DIR="${KAFKA_DIR}/.cache/${KAFKA_VERSION}"
KAFKA_LIBS_DIR="${KAFKA_CACHE_DIR}/libs"
KAFKA_CLASSPATH_FILE="${KAFKA_CACHE_DIR}/classpath.txt"
KAFKA_PID_FILE="${KAFKA_RUN_DIR}/kafka.pid"
KAFKA_LOG_FILE="${KAFKA_RUN_DIR}/server.log"
KAFKA_EFFECTIVE_CONFIG="${KAFKA_RUN_DIR}/server.properties"
KAFKA_LOG4J_CONFIG="${KAFKA_DIR}/log4j2.properties"

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

kafka_recorded_pid() { [[ -s "$KAFKA_PID_FILE" ]] && cat "$KAFKA_PID_FILE"; }
