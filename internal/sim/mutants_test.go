//go:build mutants

// This file is the mutation test: with -tags mutants each engine mutant
// (engine/internal/mutant) is switched on in turn and the simulator must
// catch it, by an invariant check or the verifier. CI runs it with
//
//	go test -tags mutants -count=1 -run TestMutants ./internal/sim/
//
// and it prints which check caught each mutant.

package sim

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// mutantEnv names the active mutant (engine/internal/mutant.Env; that
// package is internal to the engine, so the name is repeated here).
const mutantEnv = "SHAREBENCH_MUTANT"

// mutants is every mutant in the engine and the rule it breaks.
var mutants = []struct{ id, breaks string }{
	{"commit-outputs-unmarked", "commit applies the share markers but never marks the output partitions"},
	{"abort-leaves-pending", "an abort leaves staged records TX_PENDING"},
	{"abort-acknowledges", "an abort moves staged records to ACKNOWLEDGED, not AVAILABLE"},
	{"expiry-releases-pending", "lock expiry releases TX_PENDING records"},
	{"marker-any-producer", "a marker resolves other producers' TX_PENDING records"},
	{"marker-double-count", "a commit marker counts each acknowledgement twice"},
	{"fenced-producer-accepted", "the coordinator skips the producer epoch check"},
	{"no-delivery-increment", "a re-acquisition does not increment the delivery count"},
	{"session-close-archives", "a session close archives acquired records instead of releasing them"},
	{"spso-over-nonterminal", "SPSO advances over AVAILABLE records"},
	{"read-committed-aborted", "read_committed fetches return records of aborted transactions"},
	{"non-owner-accepted", "acks and staging by a member that does not hold the record succeed"},
	{"classic-abort-commits-offsets", "an abort marker commits a classic group's pending offsets"},
	{"ignore-delivery-limit", "release and lock expiry ignore the delivery limit"},
	{"lso-ignores-open-txns", "the LSO ignores open transactions"},
	{"sweep-skips-timed-out", "the timeout sweep never aborts a transaction"},
	{"fence-keeps-open-txn", "fencing a producer leaves its open transaction behind"},
	{"window-unbounded", "acquisition ignores share.partition.max.record.locks"},
	{"commit-marker-dropped", "every tenth commit marker on a partition log never lands"},
	{"reject-commits-as-accept", "a staged reject commits as an accept"},
	{"abort-keeps-one-visible", "an abort marker leaves one record of the transaction visible"},
	{"marker-ends-other-producer", "a commit marker also ends another producer's open transaction on the partition"},
	{"lso-past-open-one-partition", "one partition log in four advances its LSO past open transactions"},
	{"commit-redelivers", "a commit marker makes some accepted records AVAILABLE again"},
	{"read-returns-foreign-record", "a read_committed fetch returns a record of somewhere else in place of one in 97"},
	{"commit-after-failed-staging", "a commit succeeds after a staging call of its transaction failed"},
	{"stale-member-epoch-accepted", "staging with a stale member epoch is accepted"},
	{"marker-dropped-without-retry", "a marker to a participant cut off from the coordinator is dropped instead of retried"},
	{"dlq-written-twice", "a record archived by a reject or at the delivery limit is copied to the dead-letter queue twice"},
	{"dlq-staged-reject-not-copied", "a transactional reject's dead-letter copy is never written"},
}

const (
	mutantSeeds = 48  // seeds tried per mutant, at most
	mutantSteps = 300 // steps per seed
	aloneSeeds  = 16  // seeds the verifier alone gets (informational)
)

var mutantCall = regexp.MustCompile(`mutant\.On\("([a-z0-9-]+)"\)`)

// TestMutantTable: every mutant.On in the engine is in the table, and
// every table entry is in the engine.
func TestMutantTable(t *testing.T) {
	inEngine := map[string]bool{}
	err := filepath.WalkDir("../../engine", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "mutant" {
			return filepath.SkipDir // the seam itself
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range mutantCall.FindAllSubmatch(b, -1) {
			inEngine[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inTable := map[string]bool{}
	for _, m := range mutants {
		inTable[m.id] = true
		if !inEngine[m.id] {
			t.Errorf("mutant %q is in the table but not in the engine", m.id)
		}
	}
	for id := range inEngine {
		if !inTable[id] {
			t.Errorf("mutant %q is in the engine but not in the table", id)
		}
	}
	if len(inEngine) < 10 {
		t.Errorf("%d mutants in the engine, want at least 10", len(inEngine))
	}
}

// TestMutants switches each mutant on and requires the simulator to
// catch it within mutantSeeds seeds.
func TestMutants(t *testing.T) {
	type row struct {
		id, check, where string
		alone            string // what the verifier alone finds
		seed             int64
		took             time.Duration
	}
	var rows []row
	start := time.Now()
	for _, m := range mutants {
		t.Setenv(mutantEnv, m.id)
		t0 := time.Now()
		var caught *Outcome
		for first := int64(1); first <= mutantSeeds && caught == nil; first += 8 {
			for _, out := range runSeeds(first, 8, Config{Steps: mutantSteps}) {
				if out.Violation != nil {
					caught = out
					break
				}
			}
		}
		r := row{id: m.id, took: time.Since(t0), alone: fmt.Sprintf("missed in %d seeds", aloneSeeds)}
		// The verifier alone (step checks muted) over the same seeds.
		for first := int64(1); first <= aloneSeeds && strings.HasPrefix(r.alone, "missed"); first += 8 {
			for _, out := range runSeeds(first, 8, Config{Steps: mutantSteps, verifierOnly: true}) {
				if out.Violation != nil {
					r.alone = fmt.Sprintf("%s (seed %d)", out.Violation.Check, out.Seed)
					break
				}
			}
		}
		if caught == nil {
			t.Errorf("mutant %s (%s) survived %d seeds of %d steps", m.id, m.breaks, mutantSeeds, mutantSteps)
			r.check = "SURVIVED"
		} else {
			v := caught.Violation
			r.check, r.seed = v.Check.String(), caught.Seed
			r.where = "drain/verifier"
			if v.Step >= 0 {
				r.where = fmt.Sprintf("step #%d", v.Step)
			}
			t.Logf("%s: seed %d %v", m.id, caught.Seed, v)
		}
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].check < rows[j].check })
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-30s  %-22s  %-5s  %-14s  %-8s  %s\n", "mutant", "caught by", "seed", "where", "time", "verifier alone")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-30s  %-22s  %-5d  %-14s  %-8v  %s\n", r.id, r.check, r.seed, r.where, r.took.Round(time.Millisecond), r.alone)
	}
	fmt.Fprintf(&b, "%d mutants in %v\n", len(rows), time.Since(start).Round(time.Millisecond))
	t.Log(b.String())
}
