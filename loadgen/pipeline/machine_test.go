package pipeline

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/vocab"
)

// seq is a Rand that returns its values in turn (then 0.99).
type seq struct{ v []float64 }

func (s *seq) Float64() float64 {
	if len(s.v) == 0 {
		return 0.99
	}
	x := s.v[0]
	s.v = s.v[1:]
	return x
}

var t0 = time.Unix(1000, 0)

// run drives a machine with script: one reply per action, in order.
// Replies: "ok"; "err" (a plain error); "fenced"; "cancel"; for a poll
// "recs 1 2 3" (or "recs" for none). Inputs lines change what the next
// steps are told: "@stop", "@cut 50ms", "@stall 50ms" (after staging),
// "@stall-produce 50ms" (after producing), "@abort 1", "@at
// 2s" (the clock, from the start). It returns the trace: each action as
// op[records], each crossed phase as "|phase".
func run(t *testing.T, cfg Config, rnd []float64, script string) string {
	t.Helper()
	m := New[int](cfg, &seq{rnd})
	in := Inputs{Now: t0}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "@") {
			f := strings.Fields(line[1:])
			arg := func() time.Duration {
				d, err := time.ParseDuration(f[1])
				if err != nil {
					t.Fatalf("bad input line %q", line)
				}
				return d
			}
			switch f[0] {
			case "stop":
				in.Stop = true
			case "cut":
				in.CutUntil = in.Now.Add(arg())
			case "stall":
				in.StallUntil, in.StallAt = in.Now.Add(arg()), ""
			case "stall-produce":
				in.StallUntil, in.StallAt = in.Now.Add(arg()), vocab.AfterProduce
			case "abort":
				r, _ := strconv.ParseFloat(f[1], 64)
				in.AbortRatio = r
			case "reject":
				in.RejectRatio, _ = strconv.ParseFloat(f[1], 64)
			case "release":
				in.ReleaseRatio, _ = strconv.ParseFloat(f[1], 64)
			case "renew":
				in.RenewRatio, _ = strconv.ParseFloat(f[1], 64)
			case "end":
				in.EndTxn = true
			case "slow":
				in.SnapshotDelay = arg()
			case "at":
				in.Now = t0.Add(arg())
			default:
				t.Fatalf("bad input line %q", line)
			}
			continue
		}
		a := m.Next(in)
		out = append(out, fmtAction(a, in))
		var res Result[int]
		f := strings.Fields(line)
		switch f[0] {
		case "ok":
		case "err":
			res.Err = errors.New("boom")
		case "fenced":
			res.Err, res.Fenced = errors.New("fenced"), true
		case "cancel":
			res.Err, res.Canceled = errors.New("cancelled"), true
		case "recs":
			if a.Op != OpPoll {
				t.Fatalf("reply %q to %s (trace so far: %s)", line, a.Op, strings.Join(out, " "))
			}
			for _, x := range f[1:] {
				n, _ := strconv.Atoi(x)
				res.Recs = append(res.Recs, n)
			}
			res.At = in.Now
		default:
			t.Fatalf("bad reply %q", line)
		}
		if p := m.Done(res); p != "" {
			out = append(out, "|"+string(p))
		}
		if a.Op == OpWait {
			in.Now = a.Until // the wait passed
			if a.Slow {
				in.SnapshotDelay = 0
			}
		}
	}
	return strings.Join(out, " ")
}

func fmtAction(a Action[int], in Inputs) string {
	s := a.Op.String()
	switch a.Op {
	case OpWait:
		s += "(" + a.Until.Sub(in.Now).String()
		if a.Retry {
			s += " retry"
		}
		if a.Slow {
			s += " slow"
		}
		s += ")"
	case OpAbort:
		if a.Cause != nil {
			s += "(" + a.Cause.Error() + ")"
		}
	case OpReplace:
		if a.Aborted {
			s += "(aborted)"
		}
		if a.Wedged {
			s += "(wedged)"
		}
	case OpEndCheckpoint:
		s += "(" + a.End.String()
		if a.Cause != nil {
			s += ": " + a.Cause.Error()
		}
		s += ")"
	case OpAccept, OpReject, OpRelease:
		if a.First {
			s += "<"
		}
		if a.Last {
			s += ">"
		}
	}
	if len(a.Recs) > 0 {
		s += fmt.Sprint(a.Recs)
	}
	return s
}

// TestMachineModes pins each mode's loop: which call follows which
// outcome, and where the crash phases fall.
func TestMachineModes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		rnd    []float64
		script string
		want   string
	}{
		{"implicit: the next poll and the close accept the previous poll",
			Config{Mode: vocab.Implicit, MaxPollRecords: 5}, nil, `
				@reject 0.5
				recs 1 2
				ok
				ok
				recs 3
				ok
				ok
				@stop
				ok`,
			"poll |after-poll process[1 2] produce[1 2] |after-produce poll[1 2] |after-poll process[3] produce[3] |after-produce close[3]"},
		{"explicit: produce the accepted, accept then reject in one group",
			Config{Mode: vocab.Explicit}, []float64{0.9, 0.1, 0.7}, `
				@reject 0.5
				recs 1 2 3
				ok
				ok
				ok
				ok
				recs`,
			"poll |after-poll process[1 2 3] produce[1 3] |after-produce accept<[1 3] reject>[2] poll"},
		{"explicit: a failed ack is counted and the worker polls on; a fenced one replaces it",
			Config{Mode: vocab.Explicit}, nil, `
				recs 1
				ok
				ok
				err
				recs 2
				ok
				ok
				fenced
				ok`,
			"poll |after-poll process[1] produce[1] |after-produce accept<>[1] poll |after-poll process[2] produce[2] |after-produce accept<>[2] replace"},
		{"deferred: the output transaction commits with every poll, then the acks",
			Config{Mode: vocab.Deferred, LockDuration: time.Minute}, []float64{0.1, 0.9}, `
				@reject 0.5
				recs 1 2
				ok
				ok
				ok
				ok
				ok
				ok
				recs`,
			"poll |after-poll process[1 2] begin produce[2] |after-produce commit |after-commit-before-ack accept<[2] reject>[1] poll"},
		{"deferred: an abort releases the held records",
			Config{Mode: vocab.Deferred, LockDuration: time.Minute}, nil, `
				recs 1 2
				ok
				ok
				ok
				err
				ok
				ok
				recs`,
			"poll |after-poll process[1 2] begin produce[1 2] |after-produce commit abort(boom) release-held[1 2] poll"},
		{"deferred: locks past half their duration are renewed before the commit",
			Config{Mode: vocab.Deferred, LockDuration: time.Second}, nil, `
				recs 1
				ok
				ok
				@at 2s
				ok
				ok
				ok
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce renew[1] commit |after-commit-before-ack accept<>[1]"},
		{"transactional: polls fill one transaction up to its size, rejects staged apart",
			Config{Mode: vocab.Transactional, MaxRecords: 3}, []float64{0.9, 0.9, 0.1}, `
				@reject 0.5
				recs 1 2
				ok
				ok
				ok
				ok
				recs 3
				ok
				ok
				ok
				ok
				ok
				recs`,
			"poll |after-poll process[1 2] begin produce[1 2] |after-produce stage-accept[1 2] |after-stage poll |after-poll process[3] produce |after-produce stage-accept stage-reject[3] |after-stage commit poll"},
		{"transactional: a transaction commits once old enough, at an empty poll",
			Config{Mode: vocab.Transactional, MaxDuration: time.Second}, nil, `
				recs 1
				ok
				ok
				ok
				ok
				recs
				@at 2s
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce stage-accept[1] |after-stage poll commit"},
		{"transactional: a stalled worker waits after staging",
			Config{Mode: vocab.Transactional, MaxRecords: 1}, nil, `
				@stall 3s
				recs 1
				ok
				ok
				ok
				ok
				ok
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce stage-accept[1] |after-stage wait(3s) commit"},
		{"transactional: a stall after producing waits before staging, and one after staging is not taken then",
			Config{Mode: vocab.Transactional, MaxRecords: 1}, nil, `
				@stall-produce 3s
				recs 1
				ok
				ok
				ok
				ok
				ok
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce wait(3s) stage-accept[1] |after-stage commit"},
		{"deferred: a stall after producing waits before the commit",
			Config{Mode: vocab.Deferred, MaxRecords: 1, LockDuration: 1 * time.Hour}, nil, `
				@stall-produce 2s
				recs 1
				ok
				ok
				ok
				ok
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce wait(2s) commit |after-commit-before-ack"},
		{"transactional: a worker still stalled at the stop is abandoned, its transaction open",
			Config{Mode: vocab.Transactional, MaxRecords: 1}, nil, `
				@stall 1h
				recs 1
				ok
				ok
				ok
				ok
				@stop
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce stage-accept[1] |after-stage abandon"},
		{"classic-eos: a worker stalled after producing at the stop is abandoned",
			Config{Mode: vocab.ClassicEOS, MaxRecords: 1}, nil, `
				@stall-produce 1h
				recs 1
				ok
				ok
				ok
				@stop
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce abandon"},
		{"transactional: a failed staging aborts with its cause; a fenced one replaces the worker",
			Config{Mode: vocab.Transactional, MaxRecords: 1}, nil, `
				recs 1
				ok
				ok
				ok
				err
				ok
				recs 2
				ok
				ok
				ok
				fenced
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce stage-accept[1] abort(boom) poll |after-poll process[2] begin produce[2] |after-produce stage-accept[2] replace(aborted)"},
		{"transactional: the abort ratio aborts instead of committing; never when stopping",
			Config{Mode: vocab.Transactional, MaxRecords: 1}, []float64{0.5}, `
				@abort 0.9
				recs 1
				ok
				ok
				ok
				ok
				ok
				recs 2
				ok
				ok
				ok
				ok
				@stop
				ok
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce stage-accept[1] |after-stage abort poll |after-poll process[2] begin produce[2] |after-produce stage-accept[2] |after-stage commit close"},
		{"transactional: a stop commits the open transaction, then closes",
			Config{Mode: vocab.Transactional, MaxRecords: 10}, nil, `
				recs 1
				ok
				ok
				ok
				ok
				@stop
				ok
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce stage-accept[1] |after-stage commit close"},
		{"classic-eos: nothing is rejected; offsets are staged",
			Config{Mode: vocab.ClassicEOS, MaxRecords: 1}, []float64{0.1}, `
				@reject 0.9
				recs 1
				ok
				ok
				ok
				ok
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce stage-accept[1] |after-stage commit"},
		{"explicit: renew on purpose before processing, release without an output",
			Config{Mode: vocab.Explicit}, []float64{0.1, 0.5, 0.05, 0.15, 0.9}, `
				@renew 0.2
				@reject 0.1
				@release 0.1
				recs 1 2 3
				ok
				ok
				ok
				ok
				ok
				ok`,
			"poll |after-poll renew[1 2 3] process[1 2 3] produce[1] |after-produce accept<[1] reject[2] release>[3]"},
		{"deferred: a renew on purpose, then the end is decided again",
			Config{Mode: vocab.Deferred, LockDuration: time.Minute}, []float64{0.1, 0.9}, `
				@renew 0.5
				recs 1
				ok
				ok
				ok
				ok
				ok
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce renew[1] commit |after-commit-before-ack accept<>[1]"},
		{"transactional: EndTxn ends a small young transaction; MaxPoll bounds the poll",
			Config{Mode: vocab.Transactional, MaxRecords: 100, MaxDuration: time.Hour, MaxPollRecords: 50}, nil, `
				recs 1
				ok
				ok
				ok
				ok
				@end
				ok`,
			"poll |after-poll process[1] begin produce[1] |after-produce stage-accept[1] |after-stage commit"},
		{"a failed poll pauses and polls again; a cancelled one ends the loop",
			Config{Mode: vocab.Explicit}, nil, `
				err
				ok
				cancel
				ok`,
			"poll wait(10ms retry) poll exit"},
		{"a worker cut off from the target waits, then polls",
			Config{Mode: vocab.Explicit}, nil, `
				@cut 2s
				ok
				recs`,
			"wait(2s) poll"},
		{"a failed begin is retried after a pause; the poll's records stay held",
			Config{Mode: vocab.ClassicEOS, MaxRecords: 1}, nil, `
				recs 1
				ok
				err
				ok
				ok
				ok
				ok
				ok`,
			"poll |after-poll process[1] begin wait(10ms retry) begin produce[1] |after-produce stage-accept[1] |after-stage commit"},
		{"a begin that keeps failing is not retried past a stop: the worker closes",
			Config{Mode: vocab.Deferred}, nil, `
				recs 1
				ok
				err
				ok
				err
				@stop
				ok`,
			"poll |after-poll process[1] begin wait(10ms retry) begin close"},
		{"begins failing for BeginGiveUp replace the worker",
			Config{Mode: vocab.Deferred, BeginGiveUp: 25 * time.Millisecond}, nil, `
				recs 1
				ok
				err
				ok
				err
				ok
				err
				ok
				err
				ok`,
			"poll |after-poll process[1] begin wait(10ms retry) begin wait(10ms retry) begin wait(10ms retry) begin replace(wedged)"},
		{"a begin that succeeds starts the BeginGiveUp count again",
			Config{Mode: vocab.Transactional, MaxRecords: 1, BeginGiveUp: 15 * time.Millisecond}, nil, `
				recs 1
				ok
				err
				ok
				ok
				ok
				ok
				ok
				recs 1
				ok
				err
				ok
				err
				ok`,
			"poll |after-poll process[1] begin wait(10ms retry) begin produce[1] |after-produce stage-accept[1] |after-stage commit poll |after-poll process[1] begin wait(10ms retry) begin wait(10ms retry)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(t, tc.cfg, tc.rnd, tc.script); got != tc.want {
				t.Errorf("trace\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}

// TestMachinePollTimeout: an open transaction shortens the poll so the
// commit is not late, but never below 1ms.
func TestMachinePollTimeout(t *testing.T) {
	m := New[int](Config{Mode: vocab.Transactional, MaxDuration: time.Second}, &seq{})
	if a := m.Next(Inputs{Now: t0}); a.Op != OpPoll || a.Timeout != pollTimeout {
		t.Fatalf("idle poll: %s timeout %v, want poll %v", a.Op, a.Timeout, pollTimeout)
	}
	m.Done(Result[int]{Recs: []int{1}, At: t0})
	for _, op := range []Op{OpProcess, OpBegin, OpProduce, OpStageAccept} {
		if a := m.Next(Inputs{Now: t0}); a.Op != op {
			t.Fatalf("got %s, want %s", a.Op, op)
		}
		m.Done(Result[int]{})
	}
	for _, tc := range []struct {
		now  time.Duration
		want time.Duration
	}{{0, pollTimeout}, {950 * time.Millisecond, 50 * time.Millisecond}, {999900 * time.Microsecond, time.Millisecond}} {
		a := m.Next(Inputs{Now: t0.Add(tc.now)})
		if a.Op != OpPoll || a.Timeout != tc.want {
			t.Errorf("at %v: %s timeout %v, want poll %v", tc.now, a.Op, a.Timeout, tc.want)
		}
		m.Done(Result[int]{}) // nothing polled, not yet due
		if tc.now >= time.Second {
			break
		}
	}
}

func TestPhaseIn(t *testing.T) {
	want := map[vocab.Phase][]vocab.Mode{
		vocab.AfterPoll:            {vocab.Implicit, vocab.Explicit, vocab.Deferred, vocab.Transactional, vocab.ClassicEOS},
		vocab.AfterProduce:         {vocab.Implicit, vocab.Explicit, vocab.Deferred, vocab.Transactional, vocab.ClassicEOS},
		vocab.AfterStage:           {vocab.Transactional, vocab.ClassicEOS},
		vocab.AfterCommitBeforeAck: {vocab.Deferred},
		vocab.Idle:                 nil,
	}
	for p, modes := range want {
		for _, m := range vocab.AllModes() {
			in := false
			for _, x := range modes {
				in = in || x == m
			}
			if got := p.In(m); got != in {
				t.Errorf("%s.In(%s) = %v, want %v", p, m, got, in)
			}
		}
	}
}

func TestParse(t *testing.T) {
	for _, m := range vocab.AllModes() {
		if got, err := vocab.ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	if _, err := vocab.ParseMode("sometimes"); err == nil || !strings.Contains(err.Error(), `"sometimes"`) || !strings.Contains(err.Error(), "classic-eos") {
		t.Errorf("ParseMode(sometimes) error %v, want one naming the input and the valid modes", err)
	}
	for _, p := range vocab.CrashPhases() {
		if got, err := vocab.ParsePhase(string(p)); err != nil || got != p {
			t.Errorf("ParsePhase(%q) = %q, %v", p, got, err)
		}
	}
	if _, err := vocab.ParsePhase("idle"); err == nil {
		t.Error("ParsePhase(idle) succeeded; idle is not a crash phase")
	}
	if got := vocab.ClassicEOS.Order(); got != 4 {
		t.Errorf("ClassicEOS.Order() = %d, want 4", got)
	}
	if got := vocab.Mode("x").Order(); got != len(vocab.AllModes()) {
		t.Errorf(`Mode("x").Order() = %d, want %d`, got, len(vocab.AllModes()))
	}
}

// TestMachinePhaseIdle: the worker sits idle between loops with nothing
// held, and at after-stage between the polls of an open transaction.
func TestMachinePhaseIdle(t *testing.T) {
	m := New[int](Config{Mode: vocab.Transactional, MaxRecords: 2, MaxDuration: time.Hour}, &seq{})
	step := func(in Inputs, res Result[int]) Op {
		a := m.Next(in)
		m.Done(res)
		return a.Op
	}
	in := Inputs{Now: t0, MaxPoll: 7}
	if a := m.Next(in); a.Op != OpPoll || a.Max != 7 {
		t.Fatalf("first action %s max %d, want poll max 7", a.Op, a.Max)
	}
	m.Done(Result[int]{Recs: []int{1}, At: t0})
	for range 4 { // process, begin, produce, stage
		step(in, Result[int]{})
	}
	step(in, Result[int]{}) // an empty poll: the transaction stays open
	if got := m.Phase(); got != vocab.AfterStage {
		t.Errorf("between polls of an open transaction: phase %s, want %s", got, vocab.AfterStage)
	}
	in.EndTxn = true
	if op := step(in, Result[int]{}); op != OpCommit {
		t.Fatalf("with EndTxn: %s, want commit", op)
	}
	if got := m.Phase(); got != vocab.Idle {
		t.Errorf("after the commit: phase %s, want %s", got, vocab.Idle)
	}
}
