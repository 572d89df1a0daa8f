#!/usr/bin/env bash
# ab-gate.sh: the A/B performance gate between two commits.
#
# Builds BASE_REF and HEAD_REF from their commits (git worktrees in a
# temporary directory, never the working tree, so uncommitted work does not
# leak into either side), runs them interleaved on this machine with the
# same workloads, flags and seed, each run in its own results directory,
# then runs `sharebench gate` over each workload's runs and exits with the
# worst gate's code. By default it gates two workloads: an open-loop latency
# one (ctp-latency: throughput is pinned to the input rate, latency moves;
# 5 runs a side, one after the other, pooled) and a closed-loop throughput
# one (ctp-throughput: throughput moves; 20 pairs a mode whose two sides run
# at the same time, gated pair by pair with 'gate --paired').
# docs/ci-gate.md explains the output and the exit codes.
#
# Usage: scripts/ab-gate.sh BASE_REF HEAD_REF [extra 'sharebench run' flags]
#
#   scripts/ab-gate.sh origin/main HEAD
#   scripts/ab-gate.sh HEAD HEAD                      # A/A: the noise floor
#   scripts/ab-gate.sh HEAD~1 HEAD --duration 5s      # extra flags override the defaults
#   SHAREBENCH_AB_CPU=15% scripts/ab-gate.sh HEAD HEAD        # demo: 15% more CPU per record
#   SHAREBENCH_AB_SLOWDOWN=5ms scripts/ab-gate.sh HEAD HEAD   # demo: a slower commit
#
# Environment (defaults in brackets):
#   AB_REPEATS            runs a side of a sequential workload [5]; the
#                         Mann–Whitney test needs at least 4 a side to reach
#                         p < 0.05 (with fewer the gate fails, exit 2, unless
#                         AB_GATE_FLAGS has --threshold-only); 5 gives p down
#                         to 0.008
#   AB_PAIRS              pairs a mode of a concurrent workload [20]; they are
#                         gated with 'gate --paired' (the Wilcoxon signed-rank
#                         test of the pairs' ratios), which needs at least 6
#                         for p < 0.05; 20 gives p down to 0.000002
#   AB_PAIR_MODES         the modes of a concurrent workload, each run as its
#                         own pairs (one mode per run, so a pair's two windows
#                         line up) and gated on its own [explicit transactional]
#   AB_PAIR_GOMAXPROCS    GOMAXPROCS of both sides of a concurrent pair [1]: one
#                         P each, so each side is one always-runnable thread and
#                         the scheduler splits the CPU between them evenly
#   AB_WORKLOAD           space-separated built-in names or YAML files, each
#                         gated on its own [ctp-latency ctp-throughput]
#   AB_FLAGS              'sharebench run' flags for both sides and every
#                         workload (empty: none) [per workload: ctp-latency
#                         --modes explicit,transactional --duration 3s --warmup 500ms;
#                         ctp-throughput --duration 2s --warmup 500ms (its modes:
#                         AB_PAIR_MODES);
#                         others none]
#   AB_PAIRING            concurrent (a pair's two runs start together) or
#                         sequential (one after the other, alternating which
#                         goes first) [per workload: ctp-throughput
#                         concurrent; others sequential]
#   AB_SEED               seed of every run, the same on both sides [1]
#   AB_GATE_FLAGS         extra 'sharebench gate' flags, e.g. '--max-throughput-drop 10%'
#   AB_OUT                directory for the runs, logs and summary.md
#                         [results/ab-<UTC timestamp> in the repository]
#   CANDIDATE_TAGS        build tags for the candidate only, e.g. slowdemo
#   AB_CANDIDATE_OVERLAY  space-separated paths copied from this checkout into
#                         the candidate's tree before it builds: A/B an
#                         uncommitted change against its commit
#   SHAREBENCH_AB_CPU     a percentage such as 15%: builds the candidate with
#                         -tags cpudemo and runs it with SHAREBENCH_CPU_COST set
#                         to it (internal/cli/cpudemo.go): every record costs
#                         that much more CPU; for demonstrating that the gate
#                         fails on throughput
#   SHAREBENCH_AB_SLOWDOWN  a delay such as 5ms: builds the candidate with
#                         -tags slowdemo and runs it with SHAREBENCH_SLOW_COMMIT
#                         set to it (internal/cli/slowdemo.go), the baseline
#                         without; for demonstrating that the gate fails on
#                         latency
#
# Exit codes: the worst gate's (3 forbidden exactly-once anomaly in the
# candidate, then 4 regression, then 2 nothing to compare or too few
# repeats, 0 pass); 1 when a build or the script fails; 2 for bad arguments.

set -euo pipefail

die() {
	local code=$1
	shift
	echo "ab-gate: $*" >&2
	exit "$code"
}
note() { echo "ab-gate: $*" >&2; }

if [[ $# -lt 2 || $1 == -h || $1 == --help ]]; then
	sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
	[[ $# -ge 1 && ($1 == -h || $1 == --help) ]] && exit 0
	exit 2
fi
base_ref=$1
head_ref=$2
shift 2
extra=("$@")

repo=$(git rev-parse --show-toplevel 2>/dev/null) || die 2 "run me inside the sharebench git checkout"
base_sha=$(git -C "$repo" rev-parse --verify --quiet "$base_ref^{commit}") ||
	die 2 "BASE_REF '$base_ref' is not a commit here (in CI, check out with full history: fetch-depth: 0)"
head_sha=$(git -C "$repo" rev-parse --verify --quiet "$head_ref^{commit}") ||
	die 2 "HEAD_REF '$head_ref' is not a commit here"

repeats=${AB_REPEATS:-5}
pairs=${AB_PAIRS:-20}
read -r -a pair_modes <<<"${AB_PAIR_MODES:-explicit transactional}"
pair_procs=${AB_PAIR_GOMAXPROCS:-1}
read -r -a workloads <<<"${AB_WORKLOAD:-ctp-latency ctp-throughput}"
((${#workloads[@]})) || die 2 "AB_WORKLOAD is empty: name at least one workload"
seed=${AB_SEED:-1}
gate_flags=${AB_GATE_FLAGS:-}
tags=${CANDIDATE_TAGS:-}
overlay=${AB_CANDIDATE_OVERLAY:-}
slowdown=${SHAREBENCH_AB_SLOWDOWN:-}
cpucost=${SHAREBENCH_AB_CPU:-}
out=${AB_OUT:-$repo/results/ab-$(date -u +%Y%m%dT%H%M%SZ)}

[[ $repeats =~ ^[1-9][0-9]*$ ]] || die 2 "AB_REPEATS=$repeats: must be a positive whole number"
[[ $pairs =~ ^[1-9][0-9]*$ ]] || die 2 "AB_PAIRS=$pairs: must be a positive whole number"
[[ $pair_procs =~ ^[1-9][0-9]*$ ]] || die 2 "AB_PAIR_GOMAXPROCS=$pair_procs: must be a positive whole number"
((${#pair_modes[@]})) || die 2 "AB_PAIR_MODES is empty: name at least one mode"
[[ $seed =~ ^-?[0-9]+$ ]] || die 2 "AB_SEED=$seed: must be a whole number"
if ((repeats < 4)) && [[ " $gate_flags " != *" --threshold-only "* ]]; then
	note "warning: AB_REPEATS=$repeats: fewer than 4 runs a side can never reach p < 0.05, so the gate will fail saying so (set AB_REPEATS=5, or AB_GATE_FLAGS=--threshold-only)"
fi
if [[ -n $slowdown ]]; then
	[[ " ${tags//,/ } " == *" slowdemo "* ]] || tags="${tags:+$tags,}slowdemo"
fi
if [[ -n $cpucost ]]; then
	[[ $cpucost =~ ^[0-9]+(\.[0-9]+)?%?$ ]] || die 2 "SHAREBENCH_AB_CPU=$cpucost: must be a percentage like 15%"
	[[ " ${tags//,/ } " == *" cpudemo "* ]] || tags="${tags:+$tags,}cpudemo"
fi
read -r -a gate_extra <<<"$gate_flags"

# flags_for WORKLOAD: the 'sharebench run' flags of a workload's runs.
flags_for() {
	if [[ -n ${AB_FLAGS+set} ]]; then
		echo "$AB_FLAGS"
		return
	fi
	case $1 in
	ctp-latency) echo "--modes explicit,transactional --duration 3s --warmup 500ms" ;;
	ctp-throughput) echo "--duration 2s --warmup 500ms" ;;
	esac
}
# pairing_for WORKLOAD: how a workload's pairs run. A closed loop's figures
# measure the CPU the run got, so its pairs run at the same time: both sides
# share the same neighbours' load at the same moment and split the CPU the
# neighbours leave, so the CPU each record costs is what separates them.
# Such pairs are a paired design: the gate tests each pair's ratio
# (gate --paired), and the load, which varies far more from one pair to the
# next than within one, cancels. More, shorter pairs buy more power than
# fewer long ones. An open loop's latency would suffer from the other side's
# load, so its pairs run one after the other and are gated over pooled
# repeats.
pairing_for() {
	if [[ -n ${AB_PAIRING:-} ]]; then
		echo "$AB_PAIRING"
		return
	fi
	case $1 in
	ctp-throughput) echo concurrent ;;
	*) echo sequential ;;
	esac
}
# count_for WORKLOAD: how many runs a side it gets.
count_for() {
	if [[ $(pairing_for "$1") == concurrent ]]; then
		echo "$pairs"
	else
		echo "$repeats"
	fi
}
# wname WORKLOAD: a directory name for it.
wname() { basename "${1%.yaml}"; }

aa=false
if [[ $base_sha == "$head_sha" && -z $tags && -z $overlay ]]; then
	aa=true
fi
short_base=${base_sha:0:12}
short_head=${head_sha:0:12}

mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ab-gate.XXXXXX")
trees=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local t
	for t in "${trees[@]}"; do
		git -C "$repo" worktree remove --force "$t" >/dev/null 2>&1 || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start=$(date +%s)

# tree SHA DIR: a detached worktree of SHA at DIR.
tree() {
	git -C "$repo" worktree add --detach --quiet "$2" "$1" || die 1 "git worktree add $1 failed"
	trees+=("$2")
}

# build DIR BIN [TAGS]: go build the CLI in DIR. -trimpath keeps the build
# cache valid across the temporary directories.
build() {
	local dir=$1 bin=$2 t=${3:-}
	local args=(build -trimpath -o "$bin")
	[[ -n $t ]] && args+=(-tags "$t")
	note "building $(git -C "$dir" rev-parse --short=12 HEAD)${t:+ with -tags $t} ..."
	(cd "$dir" && go "${args[@]}" ./cmd/sharebench) || die 1 "go build failed in $dir"
}

tree "$base_sha" "$tmp/base"
base_bin=$tmp/sharebench-base
cand_bin=$tmp/sharebench-candidate
build "$tmp/base" "$base_bin"
if $aa; then
	cand_bin=$base_bin # A/A: the very same binary on both sides
else
	tree "$head_sha" "$tmp/candidate"
	for p in $overlay; do
		[[ -e $repo/$p ]] || die 2 "AB_CANDIDATE_OVERLAY: $p does not exist in $repo"
		mkdir -p "$(dirname "$tmp/candidate/$p")"
		cp -R "$repo/$p" "$tmp/candidate/$p"
	done
	build "$tmp/candidate" "$cand_bin" "$tags"
fi

# run WORKLOAD SIDE I [MODE]: one 'sharebench run' of a side into
# $out/WORKLOAD/SIDE-I (with a MODE, of that mode alone, into
# $out/WORKLOAD/MODE/SIDE-I), its output beside it in .log. A run that
# finds an anomaly (3), fails a mode (1) or is inconclusive (5: the
# verifier could not judge, e.g. a drain that timed out on a starved
# machine) still counts: the gate judges it. Bad flags (2) stop everything.
run() {
	local w=$1 side=$2 i=$3 mode=${4:-} bin=$base_bin rc=0 run_flags
	local envs=(env -u SHAREBENCH_SLOW_COMMIT -u SHAREBENCH_CPU_COST)
	[[ -n $mode ]] && envs+=("GOMAXPROCS=$pair_procs")
	if [[ $side == candidate ]]; then
		bin=$cand_bin
		[[ -n $slowdown ]] && envs+=("SHAREBENCH_SLOW_COMMIT=$slowdown")
		[[ -n $cpucost ]] && envs+=("SHAREBENCH_CPU_COST=$cpucost")
	fi
	# word-split the flag string on purpose: it is a list of flags
	read -r -a run_flags <<<"$(flags_for "$w")"
	local dir=$out/$(wname "$w")/${mode:+$mode/}$side-$i t0=$SECONDS
	local mode_flag=()
	[[ -n $mode ]] && mode_flag=(--modes "$mode")
	rm -rf "$dir"
	mkdir -p "$(dirname "$dir")"
	"${envs[@]}" "$bin" run --workload "$w" --seed "$seed" --out "$dir" --no-report --quiet \
		"${run_flags[@]}" "${mode_flag[@]}" "${extra[@]}" >"$dir.log" 2>&1 || rc=$?
	note "  $(wname "$w")${mode:+ $mode} $side $i/$(count_for "$w"): exit $rc, $((SECONDS - t0))s"
	case $rc in
	0 | 1 | 3 | 5) ;;
	*)
		tail -n 5 "$dir.log" >&2
		die "$rc" "'sharebench run' exited $rc ($dir.log); fix the flags and retry"
		;;
	esac
}

what="A/B"
$aa && what="A/A (the same build on both sides: the differences are the noise floor)"
note "$what: baseline $short_base ($base_ref), candidate $short_head ($head_ref)${tags:+, tags $tags}${overlay:+, overlay: $overlay}${slowdown:+, slowdown $slowdown}${cpucost:+, CPU cost +$cpucost}"
for w in "${workloads[@]}"; do
	if [[ $(pairing_for "$w") == concurrent ]]; then
		note "$(count_for "$w") concurrent pairs for each of ${pair_modes[*]}, GOMAXPROCS=$pair_procs: sharebench run --workload $w --seed $seed $(flags_for "$w") --modes MODE${extra[*]:+ ${extra[*]}}"
	else
		note "$(count_for "$w") runs a side, sequential pairs: sharebench run --workload $w --seed $seed $(flags_for "$w")${extra[*]:+ ${extra[*]}}"
	fi
done
for w in "${workloads[@]}"; do
	case $(pairing_for "$w") in
	concurrent | sequential) ;;
	*) die 2 "AB_PAIRING=$AB_PAIRING: must be concurrent or sequential" ;;
	esac
done
# Sequential pairs alternate which side goes first (A B, B A, A B, ...), so
# a steady drift in the machine's load does not favour either side.
most=$repeats
((pairs > most)) && most=$pairs
for ((i = 1; i <= most; i++)); do
	for w in "${workloads[@]}"; do
		((i > $(count_for "$w"))) && continue
		if [[ $(pairing_for "$w") == concurrent ]]; then
			for m in "${pair_modes[@]}"; do
				run "$w" baseline "$i" "$m" &
				pa=$!
				run "$w" candidate "$i" "$m" &
				pb=$!
				wait "$pa" || exit $?
				wait "$pb" || exit $?
			done
		elif ((i % 2)); then
			run "$w" baseline "$i"
			run "$w" candidate "$i"
		else
			run "$w" candidate "$i"
			run "$w" baseline "$i"
		fi
	done
done

# rank CODE: how bad a gate exit code is (higher is worse).
rank() {
	case $1 in
	0) echo 0 ;; 2) echo 1 ;; 1) echo 2 ;; 4) echo 3 ;; 3) echo 4 ;; *) echo 2 ;;
	esac
}
# The baseline's binary judges: a candidate cannot loosen its own gate.
# gates: one per sequential workload (WORKLOAD) and one per mode of a
# concurrent one (WORKLOAD/MODE), each "name|workload|run dir prefix".
gates=()
for w in "${workloads[@]}"; do
	wn=$(wname "$w")
	if [[ $(pairing_for "$w") == concurrent ]]; then
		for m in "${pair_modes[@]}"; do
			gates+=("$wn-$m|$w|$out/$wn/$m")
		done
	else
		gates+=("$wn|$w|$out/$wn")
	fi
done
gate_rc=0
for g in "${gates[@]}"; do
	IFS='|' read -r gn w prefix <<<"$g"
	base_dirs=()
	cand_dirs=()
	for ((i = 1; i <= $(count_for "$w"); i++)); do
		base_dirs+=(--baseline "$prefix/baseline-$i")
		cand_dirs+=(--candidate "$prefix/candidate-$i")
	done
	pair_flag=()
	[[ $(pairing_for "$w") == concurrent ]] && pair_flag=(--paired)
	"$base_bin" compare "${pair_flag[@]}" "${base_dirs[@]}" "${cand_dirs[@]}" >"$out/compare-$gn.txt" 2>&1 || true
	rc=0
	"$base_bin" gate "${pair_flag[@]}" "${base_dirs[@]}" "${cand_dirs[@]}" "${gate_extra[@]}" >"$out/gate-$gn.txt" 2>"$out/gate-$gn.err" || rc=$?
	note "gate $gn: exit $rc"
	(($(rank "$rc") > $(rank "$gate_rc"))) && gate_rc=$rc
done
elapsed=$(($(date +%s) - start))

verdict="PASS"
((gate_rc != 0)) && verdict="FAIL (exit $gate_rc)"
# repro: this invocation as one command line, with the resolved commits.
repro="AB_SEED=$seed"
for v in AB_REPEATS AB_PAIRS AB_PAIR_MODES AB_PAIR_GOMAXPROCS AB_WORKLOAD AB_FLAGS AB_PAIRING AB_GATE_FLAGS CANDIDATE_TAGS AB_CANDIDATE_OVERLAY SHAREBENCH_AB_SLOWDOWN SHAREBENCH_AB_CPU; do
	[[ -n ${!v+set} ]] && repro+=" $v=$(printf '%q' "${!v}")"
done
repro+=" scripts/ab-gate.sh $short_base $short_head"
((${#extra[@]})) && repro+=$(printf ' %q' "${extra[@]}")
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
{
	echo "<!-- sharebench-ab-gate -->"
	echo "### sharebench A/B gate: $verdict"
	echo
	if $aa; then
		echo "**A/A**: baseline and candidate are the same build of \`$short_base\`; every difference below is noise, the floor a real change must clear."
	else
		echo "baseline \`$short_base\` ($base_ref) vs candidate \`$short_head\` ($head_ref)${tags:+, candidate tags \`$tags\`}${overlay:+, candidate overlay \`$overlay\`}${slowdown:+, candidate slowed by $slowdown per commit}${cpucost:+, candidate costs $cpucost more CPU per record}"
	fi
	echo
	echo "interleaved; $(nproc) CPUs${cpu:+ ($cpu)}; ${elapsed}s in all"
	echo
	echo "reproduce: \`$repro\`"
	for g in "${gates[@]}"; do
		IFS='|' read -r wn w _ <<<"$g"
		how="$(count_for "$w") runs a side, pooled (Mann–Whitney)"
		if [[ $(pairing_for "$w") == concurrent ]]; then
			how="$(count_for "$w") concurrent pairs, GOMAXPROCS=$pair_procs, one mode a run, paired (Wilcoxon signed-rank)"
		fi
		echo
		echo "**Gate: $wn** (\`sharebench run --workload $w --seed $seed $(flags_for "$w")\`; $how)"
		echo
		echo '```text'
		cat "$out/gate-$wn.txt"
		echo '```'
		echo
		echo "<details><summary>Comparison: $wn (medians over repeats)</summary>"
		echo
		echo '```text'
		cat "$out/compare-$wn.txt"
		echo '```'
		echo
		echo "</details>"
	done
} >"$out/summary.md"

for g in "${gates[@]}"; do
	IFS='|' read -r wn _ _ <<<"$g"
	echo
	echo "== sharebench compare: $wn =="
	cat "$out/compare-$wn.txt"
	echo
	echo "== sharebench gate: $wn =="
	cat "$out/gate-$wn.txt"
	cat "$out/gate-$wn.err" >&2
done
echo
if $aa; then
	echo "A/A: the same binary on both sides, so the ratios and intervals above are this machine's noise floor; a gate threshold tighter than them would flag noise."
fi
echo "reproduce: $repro"
echo "ab-gate: $verdict in ${elapsed}s; runs, logs and summary.md in $out"
exit "$gate_rc"
