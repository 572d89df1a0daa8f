// This file runs the worker machines' scenario scripts under testdata/:
// one file per mode or concern, one subtest per scenario, each a machine
// and the replies a driver gives its actions, with the actions printed.
// Rewrite the expected output from the implementation with
//
//	go test ./loadgen/pipeline/ -run TestScripts -rewrite
//
// and read the diff: every change is a change of behaviour.
//
// Commands (times are Go durations, counted from the script's start):
//
//	new mode=M [max-poll=N] [max-records=N] [max-duration=D] [lock=D] [begin-give-up=D] [rnd=(X,...)]
//	    a machine of mode M (New); rnd is the random stream, value by
//	    value, then 0.99 for ever
//	new-checkpoint mode=M [interval=D] [timeout=D] [max-records=N] [staging=acquisition]
//	               [renew] [sink-first] [per-poll] [key] [max-poll=N] [lock=D] [rnd=(X,...)]
//	    a checkpoint-model machine: barriers every 1s, a 5s checkpoint
//	    timeout, a 2s lock and polls of up to 50 records unless told
//	    otherwise; key names a record by its number
//	run [verbose] [at=D] [stop] [cut=D] [stall=D] [stall-produce=D] [abort=X]
//	    [reject=X] [release=X] [renew=X] [end] [slow=D] [max-poll=N]
//	REPLY...
//	    changes the inputs, in the order given (at sets the clock; cut,
//	    stall and stall-produce last that long from the clock; stall
//	    strikes after staging, stall-produce after producing; slow is the
//	    next snapshot's delay), then answers one action per REPLY line:
//	    ok, err (a plain error), fenced, cancel, or for a poll recs N...
//	    (recs alone: none). A wait passes: the clock moves to its end.
//	    With verbose a poll prints its bound and timeout, a barrier its
//	    checkpoint.
//	phase
//	    the crash phase the worker last crossed (idle for none)
//
// Each action prints on its own line as op[records] with the crash phase
// its outcome crossed, if any, as |phase; waits print their length,
// aborts and checkpoint ends their cause, acknowledgement calls < and >
// where their group opens and closes.

package pipeline

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/sharebench/sharebench/vocab"
)

func TestScripts(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts under testdata (%v)", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			t.Parallel()
			var s script
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				return s.run(t, d)
			})
		})
	}
}

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

// script is the state of one script: the machine and its inputs.
type script struct {
	m       Loop[int]
	in      Inputs
	verbose bool // this run's polls and barriers print their details
}

func (s *script) run(t *testing.T, d *datadriven.TestData) string {
	a := args{t: t, d: d}
	switch d.Cmd {
	case "new":
		cfg := Config{Mode: a.mode(), MaxPollRecords: a.intOr("max-poll", 0),
			MaxRecords: a.intOr("max-records", 0), MaxDuration: a.durOr("max-duration", 0),
			LockDuration: a.durOr("lock", 0), BeginGiveUp: a.durOr("begin-give-up", 0)}
		s.m, s.in = New[int](cfg, &seq{a.floats("rnd")}), Inputs{Now: t0}
		return "ok"
	case "new-checkpoint":
		cc := &CheckpointConfig{Interval: a.durOr("interval", time.Second), Timeout: a.durOr("timeout", 5*time.Second),
			MaxRecords: a.intOr("max-records", 0), StageAtAcquisition: a.strOr("staging", "barrier") == "acquisition",
			Renew: a.has("renew"), SinkFirst: a.has("sink-first"), PerPoll: a.has("per-poll")}
		if a.has("key") {
			cc.Key = intKey
		}
		cfg := Config{Mode: a.mode(), MaxPollRecords: a.intOr("max-poll", 50), LockDuration: a.durOr("lock", 2*time.Second), Checkpoint: cc}
		s.m, s.in = New[int](cfg, &seq{a.floats("rnd")}), Inputs{Now: t0}
		return "ok"
	case "run":
		if s.m == nil {
			d.Fatalf(t, "run before new")
		}
		s.verbose = false
		for _, arg := range d.CmdArgs {
			if arg.Key == "verbose" {
				s.verbose = true
				continue
			}
			s.input(t, d, arg)
		}
		return s.replies(t, d, strings.Split(strings.TrimSpace(d.Input), "\n"))
	case "phase":
		if s.m == nil {
			d.Fatalf(t, "phase before new")
		}
		return string(s.m.Phase())
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// input changes what the next steps are told.
func (s *script) input(t *testing.T, d *datadriven.TestData, arg datadriven.CmdArg) {
	val := func() string {
		if len(arg.Vals) != 1 {
			d.Fatalf(t, "run: want one value for %s", arg.Key)
		}
		return arg.Vals[0]
	}
	dur := func() time.Duration {
		v, err := time.ParseDuration(val())
		if err != nil {
			d.Fatalf(t, "run: %s=%s is not a duration", arg.Key, val())
		}
		return v
	}
	ratio := func() float64 {
		v, err := strconv.ParseFloat(val(), 64)
		if err != nil {
			d.Fatalf(t, "run: %s=%s is not a number", arg.Key, val())
		}
		return v
	}
	in := &s.in
	switch arg.Key {
	case "at":
		in.Now = t0.Add(dur())
	case "stop":
		in.Stop = true
	case "cut":
		in.CutUntil = in.Now.Add(dur())
	case "stall":
		in.StallUntil, in.StallAt = in.Now.Add(dur()), ""
	case "stall-produce":
		in.StallUntil, in.StallAt = in.Now.Add(dur()), vocab.AfterProduce
	case "abort":
		in.AbortRatio = ratio()
	case "reject":
		in.RejectRatio = ratio()
	case "release":
		in.ReleaseRatio = ratio()
	case "renew":
		in.RenewRatio = ratio()
	case "end":
		in.EndTxn = true
	case "slow":
		in.SnapshotDelay = dur()
	case "max-poll":
		n, err := strconv.Atoi(val())
		if err != nil {
			d.Fatalf(t, "run: max-poll=%s is not an integer", val())
		}
		in.MaxPoll = n
	default:
		d.Fatalf(t, "run: unknown input %q", arg.Key)
	}
}

// replies answers one action per line and returns the actions, one a line.
func (s *script) replies(t *testing.T, d *datadriven.TestData, lines []string) string {
	var out []string
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		a := s.m.Next(s.in)
		step := fmtAction(a, s.in)
		if s.verbose {
			step += details(a)
		}
		var res Result[int]
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
				d.Fatalf(t, "reply %q to %s (actions so far: %s)", line, a.Op, strings.Join(append(out, step), "; "))
			}
			for _, x := range f[1:] {
				n, err := strconv.Atoi(x)
				if err != nil {
					d.Fatalf(t, "reply %q: %q is not a record number", line, x)
				}
				res.Recs = append(res.Recs, n)
			}
			res.At = s.in.Now
		default:
			d.Fatalf(t, "bad reply %q", line)
		}
		if p := s.m.Done(res); p != "" {
			step += " |" + string(p)
		}
		out = append(out, step)
		if a.Op == OpWait {
			s.in.Now = a.Until // the wait passed
			if a.Slow {
				s.in.SnapshotDelay = 0
			}
		}
	}
	return strings.Join(out, "\n")
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

// details are what verbose adds to a poll or a barrier.
func details(a Action[int]) string {
	switch a.Op {
	case OpPoll:
		return fmt.Sprintf(" max=%d timeout=%s", a.Max, a.Timeout)
	case OpBarrier:
		return fmt.Sprintf(" checkpoint=%d", a.Checkpoint)
	}
	return ""
}

// intKey is the scripts' CheckpointConfig.Key: a record is its number.
func intKey(r any) RecordKey { return RecordKey{Offset: int64(r.(int))} }

// args reads a command's named arguments.
type args struct {
	t *testing.T
	d *datadriven.TestData
}

func (a args) vals(key string) ([]string, bool) {
	for _, arg := range a.d.CmdArgs {
		if arg.Key == key {
			return arg.Vals, true
		}
	}
	return nil, false
}

func (a args) has(key string) bool {
	_, ok := a.vals(key)
	return ok
}

func (a args) strOr(key, def string) string {
	v, ok := a.vals(key)
	if !ok {
		return def
	}
	if len(v) != 1 {
		a.d.Fatalf(a.t, "%s: want one %s=", a.d.Cmd, key)
	}
	return v[0]
}

func (a args) mode() vocab.Mode {
	m, err := vocab.ParseMode(a.strOr("mode", ""))
	if err != nil {
		a.d.Fatalf(a.t, "%s: %v", a.d.Cmd, err)
	}
	return m
}

func (a args) intOr(key string, def int) int {
	if !a.has(key) {
		return def
	}
	n, err := strconv.Atoi(a.strOr(key, ""))
	if err != nil {
		a.d.Fatalf(a.t, "%s: %s=%s is not an integer", a.d.Cmd, key, a.strOr(key, ""))
	}
	return n
}

func (a args) durOr(key string, def time.Duration) time.Duration {
	if !a.has(key) {
		return def
	}
	v, err := time.ParseDuration(a.strOr(key, ""))
	if err != nil {
		a.d.Fatalf(a.t, "%s: %s=%s is not a duration", a.d.Cmd, key, a.strOr(key, ""))
	}
	return v
}

func (a args) floats(key string) []float64 {
	v, _ := a.vals(key)
	var out []float64
	for _, x := range v {
		if x = strings.TrimSpace(x); x == "" {
			continue
		}
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			a.d.Fatalf(a.t, "%s: %s: %q is not a number", a.d.Cmd, key, x)
		}
		out = append(out, f)
	}
	return out
}
