// This file tests classic consumer groups with transactional offset
// commits (sendOffsetsToTransaction), the classic-eos baseline: committed
// offsets move only with a commit, an abort plus Rewind re-delivers,
// generations fence stale members, and reads are read_committed.

package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sharebench/sharebench/engine"
)

func (r *rig) classic(group string, reset engine.AutoOffsetReset, topics ...string) *engine.ClassicMember {
	r.t.Helper()
	if len(topics) == 0 {
		topics = []string{"in"}
	}
	c, err := r.e.JoinClassicGroup(group, topics, reset)
	if err != nil {
		r.t.Fatalf("JoinClassicGroup(%s): %v", group, err)
	}
	return c
}

func (r *rig) classicPoll(c *engine.ClassicMember, max int) []engine.Record {
	r.t.Helper()
	recs, err := c.Poll(max)
	if err != nil {
		r.t.Fatalf("classic Poll: %v", err)
	}
	return recs
}

// TestClassicSendOffsets: offsets sent to a transaction become the group's
// committed offsets with the commit, together with the outputs; an abort
// leaves them unchanged and Rewind re-delivers from them.
func TestClassicSendOffsets(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	tp := engine.TopicPartition{Topic: "in"}
	r.produce("in", 0, 5)
	c := r.classic("cg", engine.ResetEarliest)
	p := r.producer("p")
	step := func(wantFirst int64, commit bool) {
		t.Helper()
		recs := r.classicPoll(c, 3)
		if len(recs) == 0 || recs[0].Offset != wantFirst {
			t.Fatalf("poll got %v, want to start at %d", offsetsOf(recs), wantFirst)
		}
		before, hadBefore := r.e.CommittedOffset("cg", tp)
		visibleBefore := len(r.committed("out", 0))
		wantErr(t, "begin", p.Begin(), nil)
		for _, rec := range recs {
			if _, err := p.Produce("out", 0, []engine.ProduceRecord{{Value: rec.Value}}); err != nil {
				t.Fatal(err)
			}
		}
		next := recs[len(recs)-1].Offset + 1
		wantErr(t, "send offsets", p.SendOffsetsToTransaction(map[engine.TopicPartition]int64{tp: next}, c.Metadata()), nil)
		if off, ok := r.e.CommittedOffset("cg", tp); off != before || ok != hadBefore {
			t.Fatalf("committed offset %d/%v before the commit, want %d/%v", off, ok, before, hadBefore)
		}
		if commit {
			wantErr(t, "commit", p.Commit(), nil)
			if off, ok := r.e.CommittedOffset("cg", tp); !ok || off != next {
				t.Fatalf("committed offset %d/%v after commit, want %d", off, ok, next)
			}
			if got := len(r.committed("out", 0)); got != visibleBefore+len(recs) {
				t.Fatalf("%d outputs visible, want %d", got, visibleBefore+len(recs))
			}
			return
		}
		wantErr(t, "abort", p.Abort(), nil)
		if off, ok := r.e.CommittedOffset("cg", tp); off != before || ok != hadBefore {
			t.Fatalf("committed offset %d/%v after abort, want it unchanged at %d/%v", off, ok, before, hadBefore)
		}
		if got := len(r.committed("out", 0)); got != visibleBefore {
			t.Fatalf("aborted outputs visible: %d, want %d", got, visibleBefore)
		}
		if got := r.classicPoll(c, 3); len(got) != 0 && got[0].Offset == wantFirst {
			t.Fatalf("without Rewind the position should not move back")
		}
		wantErr(t, "rewind", c.Rewind(), nil)
	}
	step(0, false) // abort: offsets unchanged (none yet)
	step(0, true)  // rewound: 0..2 again, committed 3
	step(3, false) // 3..4, aborted
	step(3, true)  // rewound to 3
	if got := r.committed("out", 0); len(got) != 5 {
		t.Fatalf("read_committed output has %d records, want exactly 5", len(got))
	}
}

// TestClassicGenerationFencing: a join bumps the generation; offsets sent
// with the old generation are rejected with ErrIllegalGeneration until the
// member polls (and syncs) again.
func TestClassicGenerationFencing(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.topic("two", 2)
	r.produce("two", 0, 2)
	r.produce("two", 1, 2)
	c1 := r.classic("cg", engine.ResetEarliest, "two")
	if n := len(r.classicPoll(c1, 10)); n != 4 {
		t.Fatalf("sole member got %d records, want 4", n)
	}
	stale := c1.Metadata()
	c2 := r.classic("cg", engine.ResetEarliest, "two")
	p := r.producer("p")
	wantErr(t, "begin", p.Begin(), nil)
	offs := map[engine.TopicPartition]int64{{Topic: "two"}: 2}
	err := p.SendOffsetsToTransaction(offs, stale)
	wantErr(t, "stale generation", err, engine.ErrIllegalGeneration)
	if !engine.ErrorIsFenced(err) {
		t.Fatalf("ErrorIsFenced(%v) = false", err)
	}
	restartTxn(t, p)
	// After a poll both members hold the new generation and one partition
	// each, read from the committed offsets (none: earliest).
	r.classicPoll(c1, 10)
	r.classicPoll(c2, 10)
	if a1, a2 := c1.Assignment(), c2.Assignment(); len(a1) != 1 || len(a2) != 1 || a1[0] == a2[0] {
		t.Fatalf("assignments %v and %v, want one distinct partition each", a1, a2)
	}
	if c1.Metadata().Generation != c2.Metadata().Generation || c1.Metadata().Generation == stale.Generation {
		t.Fatalf("generations %d/%d, stale %d", c1.Metadata().Generation, c2.Metadata().Generation, stale.Generation)
	}
	wantErr(t, "current generation", p.SendOffsetsToTransaction(offs, c1.Metadata()), nil)
	wantErr(t, "commit", p.Commit(), nil)

	// A member that left is unknown.
	meta := c2.Metadata()
	wantErr(t, "leave", c2.Leave(), nil)
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "departed member", p.SendOffsetsToTransaction(offs, meta), engine.ErrUnknownMember)
	_, err = c2.Poll(1)
	wantErr(t, "poll after leave", err, engine.ErrUnknownMember)
	restartTxn(t, p)
	meta.GroupID = "nope"
	wantErr(t, "unknown group", p.SendOffsetsToTransaction(offs, meta), engine.ErrUnknownGroup)
	wantErr(t, "abort", p.Abort(), nil)
	// The remaining member takes both partitions again.
	r.classicPoll(c1, 10)
	if a := c1.Assignment(); len(a) != 2 {
		t.Fatalf("after the leave c1 holds %v, want both partitions", a)
	}
}

// TestClassicPartitionMovedAndBack: a member keeps its positions across a
// rebalance only for partitions it held without a break. A partition that
// went to another member, was consumed and committed further there, and
// came back while the first member was not polling restarts from the
// committed offset; keeping the old position would consume again what the
// other member committed (a duplicate in a classic exactly-once pipeline).
func TestClassicPartitionMovedAndBack(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.topic("two", 2)
	p0, p1 := engine.TopicPartition{Topic: "two"}, engine.TopicPartition{Topic: "two", Partition: 1}
	r.produce("two", 0, 2)
	r.produce("two", 1, 2)
	c1 := r.classic("cg", engine.ResetEarliest, "two")
	if n := len(r.classicPoll(c1, 10)); n != 4 {
		t.Fatalf("sole member got %d records, want 4", n)
	}
	r.produce("two", 1, 2)
	c2 := r.classic("cg", engine.ResetEarliest, "two")
	got := r.classicPoll(c2, 10)
	if a := c2.Assignment(); len(a) != 1 || a[0] != p1 {
		t.Fatalf("the second member holds %v, want [%v]", a, p1)
	}
	if len(got) != 4 {
		t.Fatalf("the second member read %v from %v, want offsets 0..3", offsetsOf(got), p1)
	}
	p := r.producer("p")
	wantErr(t, "begin", p.Begin(), nil)
	wantErr(t, "send offsets", p.SendOffsetsToTransaction(map[engine.TopicPartition]int64{p1: 4}, c2.Metadata()), nil)
	wantErr(t, "commit", p.Commit(), nil)
	wantErr(t, "leave", c2.Leave(), nil)

	got = r.classicPoll(c1, 10)
	if len(got) != 0 {
		t.Fatalf("c1 read %v after %v came back, want nothing: %v was held throughout (position 2 kept) and %v is committed to its end", offsetsOf(got), p1, p0, p1)
	}
	r.produce("two", 1, 1)
	got = r.classicPoll(c1, 10)
	if len(got) != 1 || got[0].Partition != 1 || got[0].Offset != 4 {
		t.Fatalf("c1 read %v, want offset 4 of %v only", offsetsOf(got), p1)
	}
}

// TestClassicSessionTimeout: a silent classic member is removed; the
// survivor takes its partitions at the next generation.
func TestClassicSessionTimeout(t *testing.T) {
	t.Parallel()
	r := newRig(t, engine.WithSessionTimeout(10*time.Second))
	r.topic("two", 2)
	c1 := r.classic("cg", engine.ResetEarliest, "two")
	c2 := r.classic("cg", engine.ResetEarliest, "two")
	r.classicPoll(c1, 1)
	r.classicPoll(c2, 1)
	r.clk.Advance(6 * time.Second)
	r.classicPoll(c1, 1)
	r.clk.Advance(5 * time.Second)
	r.e.FireTimers()
	_, err := c2.Poll(1)
	wantErr(t, "poll of an expired member", err, engine.ErrUnknownMember)
	r.classicPoll(c1, 1)
	if a := c1.Assignment(); len(a) != 2 {
		t.Fatalf("survivor holds %v, want both partitions", a)
	}
}

// TestClassicReadCommittedAndReset: classic members read committed data
// only, from the earliest or latest offset when nothing is committed.
func TestClassicReadCommittedAndReset(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.produce("in", 0, 2)
	early := r.classic("early", engine.ResetEarliest)
	late := r.classic("late", engine.ResetLatest)
	if got := r.classicPoll(late, 10); len(got) != 0 {
		t.Fatalf("latest member got %v", offsetsOf(got))
	}
	p := r.producer("writer")
	wantErr(t, "begin", p.Begin(), nil)
	if _, err := p.Produce("in", 0, []engine.ProduceRecord{{Value: []byte("t")}}); err != nil {
		t.Fatal(err)
	}
	if got := offsetsOf(r.classicPoll(early, 10)); fmt.Sprint(got) != "[0 1]" {
		t.Fatalf("earliest member got %v while a transaction is open, want [0 1]", got)
	}
	if got := r.classicPoll(late, 10); len(got) != 0 {
		t.Fatalf("latest member read an open transaction: %v", offsetsOf(got))
	}
	wantErr(t, "commit", p.Commit(), nil)
	for name, c := range map[string]*engine.ClassicMember{"early": early, "late": late} {
		if got := offsetsOf(r.classicPoll(c, 10)); fmt.Sprint(got) != "[2]" {
			t.Fatalf("%s member got %v after the commit, want [2] (the marker is skipped)", name, got)
		}
	}
}
