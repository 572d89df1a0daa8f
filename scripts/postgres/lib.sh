# Shared settings of scripts/postgres/{up,down}. Environment:
#   POSTGRES_PORT      port on 127.0.0.1 (default 5433, beside a system
#                      server on 5432)
#   POSTGRES_DATA_DIR  the throwaway cluster's directory (default
#                      ${TMPDIR:-/tmp}/sharebench-postgres-$POSTGRES_PORT)
#   POSTGRES_BIN       directory of initdb, pg_ctl and pg_isready (default:
#                      pg_config --bindir, else the newest
#                      /usr/lib/postgresql/*/bin, Debian's layout)
#   POSTGRES_OS_USER   when run as root, the user the server runs as
#                      (PostgreSQL refuses to run as root; default postgres)
POSTGRES_PORT="${POSTGRES_PORT:-5433}"
POSTGRES_DATA_DIR="${POSTGRES_DATA_DIR:-${TMPDIR:-/tmp}/sharebench-postgres-${POSTGRES_PORT}}"
POSTGRES_OS_USER="${POSTGRES_OS_USER:-postgres}"
PG_MARKER=".sharebench-postgres"

pg_log() { printf 'postgres: %s\n' "$*" >&2; }
pg_die() { printf 'postgres: ERROR: %s\n' "$*" >&2; exit 1; }

pg_find_bin() {
  if [[ -n "${POSTGRES_BIN:-}" ]]; then
    [[ -x "$POSTGRES_BIN/pg_ctl" ]] || pg_die "POSTGRES_BIN=$POSTGRES_BIN has no pg_ctl"
    return
  fi
  if command -v pg_config >/dev/null 2>&1 && [[ -x "$(pg_config --bindir)/pg_ctl" ]]; then
    POSTGRES_BIN="$(pg_config --bindir)"
    return
  fi
  local d
  d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  [[ -n "$d" && -x "$d/pg_ctl" ]] || pg_die "no PostgreSQL server binaries found (install Debian's postgresql package, or set POSTGRES_BIN to the directory of pg_ctl)"
  POSTGRES_BIN="$d"
}

# pg_as runs a server command as the unprivileged user when we are root.
pg_as() {
  if [[ "$(id -u)" == 0 ]]; then
    id "$POSTGRES_OS_USER" >/dev/null 2>&1 || pg_die "running as root and user $POSTGRES_OS_USER does not exist (PostgreSQL refuses to run as root; set POSTGRES_OS_USER)"
    runuser -u "$POSTGRES_OS_USER" -- "$@"
  else
    "$@"
  fi
}

pg_url() { printf 'postgres://sharebench@127.0.0.1:%s/postgres?sslmode=disable\n' "$POSTGRES_PORT"; }
