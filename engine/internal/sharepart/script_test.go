// This file runs the share partition's scenario scripts under testdata/:
// one file per rule family (acquisition, acknowledgement, lock expiry,
// staging, markers, knobs, ...), one subtest per rule, each a list of calls
// with named arguments and the output each must print. sp.Check runs after
// every call. Rewrite the expected output from the implementation with
//
//	go test ./engine/internal/sharepart/ -run TestScripts -rewrite
//
// and read the diff: every change is a change of behaviour.
//
// Commands (times are Go durations; batches are FIRST-LAST:TYPE, or
// FIRST-LAST:TYPE/TYPE/... with one type per offset; TYPE is ACCEPT,
// RELEASE, REJECT, GAP, RENEW or a number):
//
//	new [start=N] [gaps=(O,...)] [delivery-limit=N] [max-record-locks=N] [tx-pending-limit=N] [knobs=(NAME,...)]
//	    a fresh share partition: 10s locks, delivery limit 3, a window of
//	    10 records, history kept; the log reports the gaps as gaps
//	acquire now=T owner=M max=N fetch-end=O     -> the ranges acquired, or "none"
//	ack now=T owner=M batches=(B,...)           -> ok, or error: SENTINEL
//	stage now=T owner=M pid=P epoch=E batches=(B,...) -> ok, or error: SENTINEL
//	unstage now=T owner=M pid=P epoch=E batches=(B,...)
//	marker now=T pid=P epoch=E result=commit|abort -> changed N
//	expire now=T                                -> expired N
//	release-owner now=T owner=M                 -> released N
//	log-start offset=O
//	window                                      -> spso, end and in-flight count
//	record offset=O                             -> the record's state
//	records offsets=(O,...)                     -> each record's state
//	counters                                    -> the cumulative counters
//
// A record's state reads AVAILABLE c1 | ACQUIRED c1 o2 d11s (count, owner,
// lock deadline; "nolock" for none) | ACKNOWLEDGED c1 | ARCHIVED c2 reason |
// TX_PENDING c1 p7 e0 ACCEPT (producer, epoch, staged outcome).

package sharepart_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/sharebench/sharebench/engine/internal/sharepart"
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
				out := s.run(t, d)
				if s.sp != nil {
					if err := s.sp.Check(); err != nil {
						t.Fatalf("%s: after %s: Check: %v", d.Pos, d.Cmd, err)
					}
				}
				return out
			})
		})
	}
}

// script is the state of one script: the share partition and its log.
type script struct {
	sp  *sharepart.SharePartition
	log gapLog
}

// sentinels name the errors a call may return, in the output.
var sentinels = []struct {
	name string
	err  error
}{
	{"not owner", sharepart.ErrNotOwner}, // matches ErrInvalidRecordState too: first
	{"invalid record state", sharepart.ErrInvalidRecordState},
	{"offset out of range", sharepart.ErrOutOfRange},
	{"invalid ack type", sharepart.ErrInvalidAckType},
	{"invalid request", sharepart.ErrInvalidRequest},
}

func errResult(err error) string {
	if err == nil {
		return "ok"
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return "error: " + s.name
		}
	}
	return "error: " + err.Error()
}

func (s *script) run(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && s.sp == nil {
		d.Fatalf(t, "%s before new", d.Cmd)
	}
	a := args{t: t, d: d}
	switch d.Cmd {
	case "new":
		cfg := testConfig()
		cfg.DeliveryLimit = a.intOr("delivery-limit", cfg.DeliveryLimit)
		cfg.MaxRecordLocks = a.intOr("max-record-locks", cfg.MaxRecordLocks)
		cfg.Knobs.TxPendingLimit = a.intOr("tx-pending-limit", 0)
		for _, k := range a.list("knobs") {
			setKnob(t, d, &cfg.Knobs, k)
		}
		sp, err := sharepart.New(cfg, a.int64Or("start", 0))
		if err != nil {
			d.Fatalf(t, "New: %v", err)
		}
		s.sp, s.log = sp, gapLog{}
		for _, g := range a.list("gaps") {
			s.log[a.parseInt64(g)] = true
		}
		return "ok"
	case "set-config":
		cfg := s.sp.Config()
		cfg.MaxRecordLocks = a.intOr("max-record-locks", cfg.MaxRecordLocks)
		return errResult(s.sp.SetConfig(cfg))
	case "acquire":
		rs := s.sp.Acquire(a.dur("now"), a.owner(), a.int("max"), a.int64("fetch-end"), s.log, nil)
		if len(rs) == 0 {
			return "none"
		}
		return renderRanges(rs)
	case "ack":
		return errResult(s.sp.Acknowledge(a.dur("now"), a.owner(), a.batches()))
	case "stage":
		return errResult(s.sp.Stage(a.dur("now"), a.owner(), a.pid(), a.epoch(), a.batches()))
	case "unstage":
		s.sp.UnstageFailed(a.dur("now"), a.owner(), a.pid(), a.epoch(), a.batches())
		return "ok"
	case "marker":
		var commit bool
		switch r := a.str("result"); r {
		case "commit":
			commit = true
		case "abort":
		default:
			d.Fatalf(t, "result=%s: want commit or abort", r)
		}
		return fmt.Sprintf("changed %d", s.sp.Marker(a.dur("now"), a.pid(), a.epoch(), commit))
	case "expire":
		return fmt.Sprintf("expired %d", s.sp.Expire(a.dur("now")))
	case "release-owner":
		return fmt.Sprintf("released %d", s.sp.ReleaseOwner(a.dur("now"), a.owner()))
	case "log-start":
		s.sp.AdvanceLogStart(a.int64("offset"))
		return "ok"
	case "window":
		return fmt.Sprintf("spso=%d end=%d inflight=%d", s.sp.SPSO(), s.sp.End(), s.sp.InFlight())
	case "record":
		return describe(s.sp.Record(a.int64("offset")))
	case "records":
		var b strings.Builder
		for _, o := range a.list("offsets") {
			off := a.parseInt64(o)
			fmt.Fprintf(&b, "%d: %s\n", off, describe(s.sp.Record(off)))
		}
		return b.String()
	case "counters":
		c := s.sp.Counters()
		return fmt.Sprintf("acquired=%d redelivered=%d accepted=%d released=%d rejected=%d archived=%d\nlock-expiries=%d staged=%d tx-committed=%d tx-aborted=%d session-released=%d",
			c.Acquired, c.Redelivered, c.Accepted, c.Released, c.Rejected, c.Archived,
			c.LockExpiries, c.Staged, c.TxCommitted, c.TxAborted, c.SessionRel)
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// knobNames maps a knobs= name to the draft choice it switches on.
var knobNames = map[string]func(*sharepart.Knobs){
	"exact-epoch-match":           func(k *sharepart.Knobs) { k.ExactEpochMatch = true },
	"abort-to-available-at-limit": func(k *sharepart.Knobs) { k.AbortToAvailableAtLimit = true },
	"stage-stop-at-first-failure": func(k *sharepart.Knobs) { k.StageStopAtFirstFailure = true },
	"reject-identical-retry":      func(k *sharepart.Knobs) { k.RejectIdenticalRetry = true },
	"failed-stage-no-lock":        func(k *sharepart.Knobs) { k.FailedStageNoLock = true },
	"dlq-after-marker":            func(k *sharepart.Knobs) { k.DLQAfterMarker = true },
}

func setKnob(t *testing.T, d *datadriven.TestData, k *sharepart.Knobs, name string) {
	set, ok := knobNames[name]
	if !ok {
		d.Fatalf(t, "unknown knob %q", name)
	}
	set(k)
}

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

func (a args) str(key string) string {
	v, ok := a.vals(key)
	if !ok || len(v) != 1 {
		a.d.Fatalf(a.t, "%s: want one %s=", a.d.Cmd, key)
	}
	return v[0]
}

func (a args) list(key string) []string {
	v, _ := a.vals(key)
	var out []string
	for _, x := range v {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func (a args) parseInt64(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		a.d.Fatalf(a.t, "%s: %q is not an integer", a.d.Cmd, s)
	}
	return n
}

func (a args) int64(key string) int64 { return a.parseInt64(a.str(key)) }
func (a args) int(key string) int     { return int(a.int64(key)) }

func (a args) int64Or(key string, def int64) int64 {
	if _, ok := a.vals(key); !ok {
		return def
	}
	return a.int64(key)
}

func (a args) intOr(key string, def int) int { return int(a.int64Or(key, int64(def))) }

func (a args) dur(key string) time.Duration {
	d, err := time.ParseDuration(a.str(key))
	if err != nil {
		a.d.Fatalf(a.t, "%s: %s=%s is not a duration", a.d.Cmd, key, a.str(key))
	}
	return d
}

func (a args) owner() sharepart.Owner     { return sharepart.Owner(a.int64("owner")) }
func (a args) pid() sharepart.ProducerID  { return sharepart.ProducerID(a.int64("pid")) }
func (a args) epoch() int16               { return int16(a.int64("epoch")) }
func (a args) batches() []sharepart.Batch { return parseBatches(a.t, a.d, a.list("batches")) }

var ackTypeNames = map[string]sharepart.AckType{
	"GAP": sharepart.Gap, "ACCEPT": sharepart.Accept, "RELEASE": sharepart.Release,
	"REJECT": sharepart.Reject, "RENEW": sharepart.Renew,
}

func parseAckType(t *testing.T, d *datadriven.TestData, s string) sharepart.AckType {
	if a, ok := ackTypeNames[s]; ok {
		return a
	}
	n, err := strconv.ParseUint(s, 10, 8)
	if err != nil {
		d.Fatalf(t, "%q is not an ack type", s)
	}
	return sharepart.AckType(n)
}

// parseBatches reads FIRST-LAST:TYPE and FIRST-LAST:TYPE/TYPE/... (one type
// per offset; a trailing "/" marks a per-offset list of one); FIRST and
// LAST may be negative.
func parseBatches(t *testing.T, d *datadriven.TestData, specs []string) []sharepart.Batch {
	var out []sharepart.Batch
	for _, spec := range specs {
		rng, types, ok := strings.Cut(spec, ":")
		i := strings.Index(rng[1:], "-") + 1
		if !ok || i == 0 {
			d.Fatalf(t, "batch %q: want FIRST-LAST:TYPE", spec)
		}
		first, err1 := strconv.ParseInt(rng[:i], 10, 64)
		last, err2 := strconv.ParseInt(rng[i+1:], 10, 64)
		if err1 != nil || err2 != nil {
			d.Fatalf(t, "batch %q: want FIRST-LAST:TYPE", spec)
		}
		b := sharepart.Batch{First: first, Last: last}
		if strings.Contains(types, "/") {
			b.Types = []sharepart.AckType{} // "FIRST-LAST:/" is a per-offset batch with no types
			for _, p := range strings.Split(types, "/") {
				if p != "" {
					b.Types = append(b.Types, parseAckType(t, d, p))
				}
			}
		} else {
			b.Type = parseAckType(t, d, types)
		}
		out = append(out, b)
	}
	return out
}
