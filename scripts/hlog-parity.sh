#!/usr/bin/env bash
# hlog-parity.sh RUN_DIR: checks, with HdrHistogram's own Java library
# (2.2.2, fetched from Maven Central by mvn), that every .hlog file of a run
# holds exactly the samples of its result.json: count, p50, p99, p99.9 and
# max of each histogram, read with HistogramLogReader and
# getValueAtPercentile. Prints both sides and exits 1 on any difference.
# Needs java (17+), mvn and python3.
set -euo pipefail
dir=${1:?usage: scripts/hlog-parity.sh RUN_DIR}
ver=2.2.2
jar=$HOME/.m2/repository/org/hdrhistogram/HdrHistogram/$ver/HdrHistogram-$ver.jar
[[ -f $jar ]] || mvn -q dependency:get -Dartifact=org.hdrhistogram:HdrHistogram:$ver
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/Parity.java" <<'JAVA'
import org.HdrHistogram.*;
import java.io.File;
public class Parity {
  public static void main(String[] args) throws Exception {
    for (String f : args) {
      HistogramLogReader r = new HistogramLogReader(new File(f));
      Histogram acc = null;
      EncodableHistogram h;
      while ((h = r.nextIntervalHistogram()) != null) {
        if (acc == null) acc = new Histogram(((Histogram) h).getNumberOfSignificantValueDigits());
        acc.add((Histogram) h);
      }
      System.out.printf("%s count=%d p50=%d p99=%d p99.9=%d max=%d%n", new File(f).getName(), acc.getTotalCount(),
        acc.getValueAtPercentile(50), acc.getValueAtPercentile(99), acc.getValueAtPercentile(99.9), acc.getMaxValue());
    }
  }
}
JAVA
(cd "$dir" && java -cp "$jar" "$tmp/Parity.java" *.hlog) | sort >"$tmp/java.txt"
python3 - "$dir/result.json" <<'PY' | sort >"$tmp/result.txt"
import json, sys
r = json.load(open(sys.argv[1]))
for m in r["modes"]:
    name = m["mode"] if r.get("repeats", 1) <= 1 else "%s-r%d" % (m["mode"], m["repeat"])
    for n, h in sorted((m.get("histograms") or {}).items()):
        if h["count"] > 0:
            print("%s.%s.hlog count=%d p50=%d p99=%d p99.9=%d max=%d" % (name, n, h["count"], h["p50"], h["p99"], h["p999"], h["max"]))
PY
if diff "$tmp/result.txt" "$tmp/java.txt"; then
  echo "hlog parity: $(wc -l <"$tmp/java.txt") histograms, HdrHistogram $ver agrees with result.json"
else
  echo "hlog parity: FAIL (< result.json, > HdrHistogram $ver on the .hlog files)" >&2
  exit 1
fi
