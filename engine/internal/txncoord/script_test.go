// This file runs the coordinator core's scenario scripts under testdata/:
// one file per transition family (init and fencing, begin, participants,
// prepare and complete, admission, the timeout sweep, resume and adopt),
// each a list of calls with named arguments and the output each must
// print. Check runs after every call. Rewrite the expected output from the
// implementation with
//
//	go test ./engine/internal/txncoord/ -run TestScripts -rewrite
//
// and read the diff: every change is a change of behaviour.
//
// Commands (times are Go durations; a mutating command prints the state
// after it on the next line):
//
//	new id=ID pid=P timeout=T          a fresh id (EMPTY, epoch 0); the
//	                                   script's producer id source then
//	                                   hands out 100, 101, ...
//	set [epoch=E] [pid=P] [state=S] [timed-out-epoch=E] -> forces fields
//	fence-aborts                       -> yes | no
//	init timeout=T                     -> Reinit
//	next                               -> the next producer id and epoch
//	bump                               -> BumpEpoch
//	begin now=T                        -> ok | refused
//	add-part p=X | add-share s=X | add-group g=X -> new | present
//	prepare result=commit|abort        -> marker epoch E | refused
//	complete result=commit|abort       -> ok | refused (pid and epoch from Next)
//	forget
//	admit pid=P epoch=E [decided]      -> admitted | fenced | fenced: timed out
//	timed-out now=T                    -> yes | no
//	mark-timed-out
//	resumable pid=P epoch=E [decided]  -> yes | no
//	adopts seq=N result=commit|abort pid=P epoch=E -> yes | no
//	show                               -> the state
//
// The state reads ID: pid=P epoch=E STATE seq=N started=T timeout=T
// timed-out-epoch=E parts=[...] shares=[...] groups=[...].

package txncoord_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/sharebench/sharebench/engine/internal/txncoord"
)

type txn = txncoord.Txn[string, string]

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
				out := s.run(t, d)
				if s.t != nil {
					if err := s.t.Check(); err != nil {
						t.Fatalf("%s: after %s: Check: %v", d.Pos, d.Cmd, err)
					}
				}
				return out
			})
		})
	}
}

// script is the state of one script: the transaction and the producer id
// source.
type script struct {
	t   *txn
	pid int64
}

func (s *script) nextPID() int64 {
	s.pid++
	return s.pid
}

func (s *script) run(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && s.t == nil {
		d.Fatalf(t, "%s before new", d.Cmd)
	}
	switch d.Cmd {
	case "new":
		s.t = txncoord.New[string, string](str(t, d, "id"), i64(t, d, "pid"), dur(t, d, "timeout"))
		s.pid = 99
		return s.state()
	case "set":
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "epoch":
				s.t.Epoch = int16(i64(t, d, "epoch"))
			case "pid":
				s.t.PID = i64(t, d, "pid")
			case "state":
				s.t.State = parseState(t, d, str(t, d, "state"))
			case "timed-out-epoch":
				s.t.TimedOutEpoch = int16(i64(t, d, "timed-out-epoch"))
			default:
				d.Fatalf(t, "set: unknown field %s", a.Key)
			}
		}
		return s.state()
	case "fence-aborts":
		return yes(s.t.FenceAborts())
	case "init":
		s.t.Reinit(dur(t, d, "timeout"), s.nextPID)
		return s.state()
	case "next":
		before := s.pid
		pid, epoch := s.t.Next(s.nextPID)
		drew := ""
		if s.pid != before {
			drew = " (a fresh producer id)"
		}
		return fmt.Sprintf("pid=%d epoch=%d%s", pid, epoch, drew)
	case "bump":
		s.t.BumpEpoch(s.nextPID)
		return s.state()
	case "begin":
		return s.verdict(s.t.Begin(dur(t, d, "now")), "ok")
	case "add-part":
		return s.added(s.t.AddPart(str(t, d, "p")))
	case "add-share":
		return s.added(s.t.AddShare(str(t, d, "s")))
	case "add-group":
		return s.added(s.t.AddGroup(str(t, d, "g")))
	case "prepare":
		e, ok := s.t.Prepare(commit(t, d))
		return s.verdict(ok, fmt.Sprintf("marker epoch %d", e))
	case "complete":
		pid, epoch := s.t.Next(s.nextPID)
		return s.verdict(s.t.Complete(commit(t, d), pid, epoch), "ok")
	case "forget":
		s.t.Forget()
		return s.state()
	case "admit":
		return s.t.Admit(i64(t, d, "pid"), int16(i64(t, d, "epoch")), d.HasArg("decided")).String()
	case "timed-out":
		return yes(s.t.TimedOut(dur(t, d, "now")))
	case "mark-timed-out":
		s.t.MarkTimedOut()
		return s.state()
	case "resumable":
		return yes(s.t.Resumable(i64(t, d, "pid"), int16(i64(t, d, "epoch")), d.HasArg("decided")))
	case "adopts":
		return yes(s.t.Adopts(i64(t, d, "seq"), commit(t, d), i64(t, d, "pid"), int16(i64(t, d, "epoch"))))
	case "show":
		return s.state()
	}
	d.Fatalf(t, "unknown command %s", d.Cmd)
	return ""
}

// verdict prints what a transition answered and the state after it.
func (s *script) verdict(ok bool, what string) string {
	if !ok {
		what = "refused"
	}
	return what + "\n" + s.state()
}

func (s *script) added(isNew bool) string {
	if isNew {
		return "new\n" + s.state()
	}
	return "present\n" + s.state()
}

func (s *script) state() string {
	t := s.t
	return fmt.Sprintf("%s: pid=%d epoch=%d %v seq=%d started=%v timeout=%v timed-out-epoch=%d parts=%v shares=%v groups=%v",
		t.ID, t.PID, t.Epoch, t.State, t.Seq, t.Started, t.Timeout, t.TimedOutEpoch, []string(t.Parts), []string(t.Shares), []string(t.Groups))
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func parseState(t *testing.T, d *datadriven.TestData, name string) txncoord.State {
	for s := txncoord.Empty; s <= txncoord.Dead; s++ {
		if s.String() == name {
			return s
		}
	}
	d.Fatalf(t, "unknown state %q", name)
	return 0
}

func commit(t *testing.T, d *datadriven.TestData) bool {
	switch r := str(t, d, "result"); r {
	case "commit":
		return true
	case "abort":
		return false
	default:
		d.Fatalf(t, "result=%s: want commit or abort", r)
	}
	return false
}

func str(t *testing.T, d *datadriven.TestData, key string) string {
	var v string
	d.ScanArgs(t, key, &v)
	return v
}

func i64(t *testing.T, d *datadriven.TestData, key string) int64 {
	v, err := strconv.ParseInt(str(t, d, key), 10, 64)
	if err != nil {
		d.Fatalf(t, "%s: %v", key, err)
	}
	return v
}

func dur(t *testing.T, d *datadriven.TestData, key string) time.Duration {
	v, err := time.ParseDuration(str(t, d, key))
	if err != nil {
		d.Fatalf(t, "%s: %v", key, err)
	}
	return v
}
