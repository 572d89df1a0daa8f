// This file holds the end of a simulation: the drain, in which the workers
// finish without faults until every input is resolved, and the verifier's
// verdict per mode (docs/design.md §7).

package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

const (
	drainRounds       = 40  // rounds of the drain, at most
	drainStepsPerTurn = 200 // work steps one worker takes per round, at most
)

// drainAndVerify finishes the run: the input transaction commits, zombies
// and stalls end, the workers work without faults (the clock moving past
// locks and sessions between rounds) until every input is resolved, then
// the verifier judges each mode. Every drain step is checked like a
// scheduled one.
func (s *sim) drainAndVerify() error {
	s.drain = true
	s.failStage = false
	r := rand.New(rand.NewPCG(uint64(s.cfg.Seed), 0xd7a1_0003))
	n := 0
	step := func(f func()) error {
		s.begin(fmt.Sprintf("drain.%d", n))
		n++
		f()
		return s.end()
	}
	if s.inOpen != nil {
		if err := step(func() {
			err := s.producerCall(s.txnIn, inTxnID, "commit", s.txnIn.Commit)
			s.inOpen.clientEnd(true, err)
			s.say("input-txn commit: %s", errName(err))
		}); err != nil {
			return err
		}
	}
	for _, sl := range s.slots {
		if sl.zombie != nil {
			sl.zombie.abandon()
		}
		sl.cur.stallUntil = 0
	}
	turn := func(sl *slot) error {
		for k := 0; k < drainStepsPerTurn; k++ {
			w := sl.cur
			w.emptyPoll = false
			if err := step(func() { s.say("work %s", w.name); w.work(r) }); err != nil {
				return err
			}
			if w.emptyPoll && w.m.Phase() == vocab.Idle {
				break // nothing more for it this round
			}
		}
		return nil
	}
	for round := 0; round < drainRounds && !s.drained(); round++ {
		for _, sl := range s.slots {
			if err := turn(sl); err != nil {
				return err
			}
		}
		if s.p.checkpoint >= 0 {
			// A checkpoint's barrier comes an interval after its first
			// record, before its locks end: the checkpointing workers
			// take it before the clock moves past the locks.
			if err := step(func() { s.advance(s.p.cp.Interval) }); err != nil {
				return err
			}
			for _, sl := range s.slots {
				if sl.mode == s.p.checkpoint {
					if err := turn(sl); err != nil {
						return err
					}
				}
			}
		}
		if err := step(func() { s.advance(s.p.lock + s.p.sweep) }); err != nil {
			return err
		}
	}
	if s.drained() {
		// Every record archived by a reject or at the limit has its copy.
		if err := step(func() { s.say("dlq final"); s.checkDLQ(true) }); err != nil {
			return err
		}
	}
	s.logf("drain: %d steps, drained %v", n, s.drained())
	return s.verify()
}

// drained reports whether every input is resolved in every group and no
// transaction is open.
func (s *sim) drained() bool {
	if s.inOpen != nil {
		return false
	}
	for _, id := range s.txnIDs {
		if t := s.tracks[id]; t != nil && (t.state == txnOpen || t.completing) {
			return false
		}
	}
	for g := range s.share {
		for _, m := range s.share[g] {
			_, hw, _, err := s.e.Offsets(m.tp)
			if err != nil {
				return false
			}
			info, err := s.e.SharePartition(m.group, m.tp)
			if errors.Is(err, engine.ErrUnknownGroup) {
				if hw > 0 {
					return false
				}
				continue
			}
			if err != nil || info.SPSO < hw {
				return false
			}
		}
	}
	g := len(modes) - 1
	for _, ip := range s.in {
		last := int64(-1)
		for off := range ip.recs {
			if ip.committed(int64(off)) {
				last = int64(off)
			}
		}
		if last < 0 {
			continue
		}
		off, ok := s.e.CommittedOffset(s.groups[g], ip.tp)
		if !ok || off <= last {
			return false
		}
	}
	return true
}

// verify judges every mode as a run is judged: the committed inputs go
// into the mode's ledger beside what its workers booked, and the ledger
// reads the outputs back through the engine target (read_committed, and
// read_uncommitted with the markers), the open transactions and the final
// share state, for the verifier.
func (s *sim) verify() error {
	s.results = map[string]*result.Verification{}
	for g, mode := range modes {
		l := s.ledgers[g]
		for p, ip := range s.in {
			for off, r := range ip.recs {
				if ip.committed(int64(off)) {
					l.AddInput(r.id, int32(p), int64(off), 0)
				}
			}
		}
		res, err := l.Judge(context.Background(), s.t, s.tcfg[g], mode, s.cps[g], verify.Options{DeliveryLimit: s.p.limit, MaxWitnesses: 3})
		if err != nil {
			return err
		}
		s.results[string(mode)] = res
		s.logf("verify %s: %s", mode, verdictLine(res))
		if !res.Pass && s.viol == nil {
			s.verifying = true
			s.fail(vocab.VerifierCheck(mode), "%s", verdictDetail(res))
		}
	}
	if s.viol != nil {
		return errViolation
	}
	return nil
}

// verdictLine summarises a verdict in one line.
func verdictLine(res *result.Verification) string {
	kinds := make([]vocab.Finding, 0, len(res.Counts))
	for k := range res.Counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	parts := []string{fmt.Sprintf("inputs %d outputs %d", res.Inputs, res.Outputs)}
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, res.Counts[k]))
	}
	pass := "PASS"
	if !res.Pass {
		pass = "FAIL (" + strings.Join(vocab.Names(res.Forbidden), ", ") + ")"
	}
	return pass + ": " + strings.Join(parts, ", ")
}

// verdictDetail names the forbidden anomalies with a witness each.
func verdictDetail(res *result.Verification) string {
	var b strings.Builder
	fmt.Fprintf(&b, "forbidden anomalies:")
	for _, k := range res.Forbidden {
		fmt.Fprintf(&b, " %s×%d", k, res.Counts[k])
		if ws := res.Witnesses[k]; len(ws) > 0 {
			w := ws[0]
			fmt.Fprintf(&b, " (input %d at p%d@%d, %s, delivered %d: %s)", w.InputID, w.Partition, w.Offset, w.State, w.DeliveryCount, w.Detail)
		}
	}
	for _, n := range res.Notes {
		if !strings.Contains(n, "delivery limit") {
			fmt.Fprintf(&b, "; note: %s", n)
		}
	}
	return b.String()
}
