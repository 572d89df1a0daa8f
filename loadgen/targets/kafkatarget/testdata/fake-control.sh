#!/bin/sh
# A fake broker-control command for the role tests: records the action and
# the node it was asked to act on (one "ACTION ID" line in $DIR/log), marks
# the node down (kill, restart) or paused in $DIR/state-ID and, when
# $DIR/hold exists, holds it so until the test's role view has seen it
# that way ($DIR/seen-ID, at most 10 s), then marks it back by removing
# the state.
#
#   fake-control.sh DIR ACTION --broker ID [--for DURATION]
set -eu
dir="$1"; action="$2"; shift 2
broker=""
while [ $# -gt 0 ]; do
  case "$1" in
    --broker) broker="$2"; shift 2 ;;
    --for) shift 2 ;;
    *) echo "fake-control: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$broker" ] || { echo "fake-control: --broker is required" >&2; exit 2; }
case "$action" in
  kill|restart) state=down ;;
  pause) state=paused ;;
  *) echo "fake-control: unknown action $action" >&2; exit 2 ;;
esac
echo "$action $broker" >> "$dir/log"
rm -f "$dir/seen-$broker"
echo "$state" > "$dir/state-$broker"
i=0
while [ -e "$dir/hold" ] && [ ! -e "$dir/seen-$broker" ] && [ "$i" -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
rm -f "$dir/state-$broker" "$dir/seen-$broker"
echo "back node $broker"
