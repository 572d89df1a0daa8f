// This file tests the marker queue's timer rule from inside the package:
// the marker goroutine keeps its timer armed while commits flow, so a
// producer committing back to back never sets it, and it disarms after
// one wake-up that finds no id queued since the last.

package engine

import (
	"testing"
	"time"
)

func TestMarkerQueueArming(t *testing.T) {
	t.Parallel()
	const d = time.Millisecond
	type step struct {
		op        string // add, remove, take (the marker goroutine's, dueOnly)
		id        string
		now       time.Duration
		wantTaken int
		wantArmed bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"an add arms an unarmed timer", []step{
			{op: "add", id: "a", now: 0, wantArmed: true},
		}},
		{"the producer sent its markers and commits again: the goroutine keeps the timer armed", []step{
			{op: "add", id: "a", now: 0, wantArmed: true},
			{op: "remove", id: "a", wantArmed: true},
			{op: "take", now: d, wantTaken: 0, wantArmed: true},
			{op: "add", id: "a", now: d + d/2, wantArmed: true},
			{op: "remove", id: "a", wantArmed: true},
			{op: "take", now: 2 * d, wantTaken: 0, wantArmed: true},
		}},
		{"a wake-up with nothing queued since the last disarms", []step{
			{op: "add", id: "a", now: 0, wantArmed: true},
			{op: "remove", id: "a", wantArmed: true},
			{op: "take", now: d, wantTaken: 0, wantArmed: true},
			{op: "take", now: 2 * d, wantTaken: 0, wantArmed: false},
			{op: "add", id: "a", now: 3 * d, wantArmed: true},
		}},
		{"a due id is taken; one not yet due keeps the timer armed", []step{
			{op: "add", id: "a", now: 0, wantArmed: true},
			{op: "add", id: "b", now: d / 2, wantArmed: true},
			{op: "take", now: d, wantTaken: 1, wantArmed: true},
			{op: "take", now: 2 * d, wantTaken: 1, wantArmed: false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var q markerQueue
			q.init(false)
			defer q.timer.Stop()
			for i, s := range tc.steps {
				taken := 0
				switch s.op {
				case "add":
					q.add(s.id, s.now, d)
				case "remove":
					q.remove(s.id)
				case "take":
					taken = len(q.take(s.now, true, d))
				}
				q.mu.Lock()
				armed := q.armed
				q.mu.Unlock()
				if taken != s.wantTaken || armed != s.wantArmed {
					t.Fatalf("step %d (%s %s at %v): took %d, armed %v; want %d, %v", i, s.op, s.id, s.now, taken, armed, s.wantTaken, s.wantArmed)
				}
			}
		})
	}
}
