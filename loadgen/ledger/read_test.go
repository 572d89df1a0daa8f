// This file tests the reads up to known end offsets: where they stop, and
// what a read that stops short says.

package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/targets"
)

// scriptReader returns its polls in turn (then nothing) and reports the
// positions they leave it at.
type scriptReader struct {
	polls [][]*targets.Record
	pos   map[int32]int64
}

func (r *scriptReader) Poll(ctx context.Context) ([]*targets.Record, error) {
	if len(r.polls) == 0 {
		<-ctx.Done()
		return nil, nil
	}
	recs := r.polls[0]
	r.polls = r.polls[1:]
	for _, rec := range recs {
		r.pos[rec.Partition] = max(r.pos[rec.Partition], rec.Offset+1)
	}
	return recs, nil
}

func (r *scriptReader) Positions() map[int32]int64 {
	out := map[int32]int64{}
	for p, o := range r.pos {
		out[p] = o
	}
	return out
}

func (r *scriptReader) Close() error { return nil }

func rec(p int32, o int64) *targets.Record { return &targets.Record{Partition: p, Offset: o} }

// TestReadTo: a read stops as soon as the position reaches the end offsets
// in every partition (an empty partition's end is 0: reached at once);
// one that stops making progress short of them (for the stall, or, with
// stall 0, in one poll), or whose reader returns more records than the
// offsets it passes, says which partition it missed and where it stood,
// instead of stopping quietly.
func TestReadTo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		polls     [][]*targets.Record
		ends      map[int32]int64
		stall     time.Duration
		wantRead  int
		wantShort string
	}{
		{"reached after three polls; the fourth is never made", [][]*targets.Record{{rec(0, 0)}, {rec(1, 0), rec(1, 1)}, {rec(0, 1)}, {rec(0, 2)}},
			map[int32]int64{0: 2, 1: 2, 2: 0}, 50 * time.Millisecond, 4, ""},
		{"nothing to read", nil, map[int32]int64{0: 0}, 50 * time.Millisecond, 0, ""},
		{"partition 1 never reaches its end", [][]*targets.Record{{rec(0, 0), rec(1, 0)}},
			map[int32]int64{0: 1, 1: 3}, 50 * time.Millisecond, 2, "stopped short of the end offsets (made no progress for 50ms; partition 1 at offset 1 of 3)"},
		{"stall 0: one poll that moves nothing ends the read", [][]*targets.Record{{rec(0, 0)}},
			map[int32]int64{0: 3}, 0, 1, "stopped short of the end offsets (a poll made no progress; partition 0 at offset 1 of 3)"},
		{"stall 0: reached without waiting", [][]*targets.Record{{rec(0, 0)}, {rec(0, 1)}},
			map[int32]int64{0: 2}, 0, 2, ""},
		{"a reader returning one offset over and over is cut off at the offsets' count", [][]*targets.Record{{rec(0, 0)}, {rec(0, 0)}, {rec(0, 0)}, {rec(0, 0)}},
			map[int32]int64{0: 2}, 50 * time.Millisecond, 2, "stopped short of the end offsets (the reader returned 3 records for the 2 offsets it had to pass; partition 0 at offset 1 of 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := &scriptReader{polls: tc.polls, pos: map[int32]int64{}}
			read := 0
			short, err := ReadTo(context.Background(), rd, tc.ends, tc.stall, func(recs []*targets.Record) { read += len(recs) })
			if err != nil {
				t.Fatal(err)
			}
			if short != tc.wantShort || read != tc.wantRead {
				t.Errorf("ReadTo: short %q after %d records, want %q after %d", short, read, tc.wantShort, tc.wantRead)
			}
		})
	}
}
