// This file tests AckRanges: sorting, merging of consecutive offsets and
// leaving the input alone.

package engine_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/sharebench/sharebench/engine"
)

func TestAckRanges(t *testing.T) {
	t.Parallel()
	rec := func(p int32, off int64) engine.Record {
		return engine.Record{Topic: "in", Partition: p, Offset: off}
	}
	ack := func(p int32, first, last int64) engine.Acknowledgement {
		return engine.Acknowledgement{Topic: "in", Partition: p, First: first, Last: last, Type: engine.AckAccept}
	}
	at := func(r engine.Record) (string, int32, int64) { return r.Topic, r.Partition, r.Offset }
	tests := []struct {
		name string
		recs []engine.Record
		want []engine.Acknowledgement
	}{
		{"empty", nil, nil},
		{"one", []engine.Record{rec(0, 7)}, []engine.Acknowledgement{ack(0, 7, 7)}},
		{"consecutive", []engine.Record{rec(0, 3), rec(0, 4), rec(0, 5)}, []engine.Acknowledgement{ack(0, 3, 5)}},
		{"unordered", []engine.Record{rec(0, 5), rec(0, 3), rec(0, 4)}, []engine.Acknowledgement{ack(0, 3, 5)}},
		{"gaps", []engine.Record{rec(0, 1), rec(0, 2), rec(0, 4), rec(0, 7), rec(0, 8)},
			[]engine.Acknowledgement{ack(0, 1, 2), ack(0, 4, 4), ack(0, 7, 8)}},
		{"partitions", []engine.Record{rec(2, 0), rec(0, 1), rec(1, 5), rec(0, 0), rec(2, 1), rec(1, 6), rec(0, 3)},
			[]engine.Acknowledgement{ack(0, 0, 1), ack(0, 3, 3), ack(1, 5, 6), ack(2, 0, 1)}},
		// A range never spans partitions, even when the offsets run on.
		{"offsets run across partitions", []engine.Record{rec(1, 1), rec(0, 0)},
			[]engine.Acknowledgement{ack(0, 0, 0), ack(1, 1, 1)}},
		// Nor topics: a group subscribed to two topics polls records of
		// both with the same partitions and offsets.
		{"topics", []engine.Record{{Topic: "in-1", Partition: 0, Offset: 1}, rec(0, 0), {Topic: "in-1", Partition: 0, Offset: 0}, rec(0, 1)},
			[]engine.Acknowledgement{ack(0, 0, 1), {Topic: "in-1", Partition: 0, First: 0, Last: 1, Type: engine.AckAccept}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := slices.Clone(tt.recs)
			got := engine.AckRanges(in, at, engine.AckAccept)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("AckRanges(%v) = %v, want %v", tt.recs, got, tt.want)
			}
			if !reflect.DeepEqual(in, tt.recs) {
				t.Errorf("AckRanges modified its input: %v, was %v", in, tt.recs)
			}
		})
	}
}

// TestAckRangesType: every range carries the requested type, and pointer
// records work as values do.
func TestAckRangesType(t *testing.T) {
	t.Parallel()
	recs := []*engine.Record{{Topic: "t", Partition: 1, Offset: 9}, {Topic: "t", Partition: 0, Offset: 2}}
	at := func(r *engine.Record) (string, int32, int64) { return r.Topic, r.Partition, r.Offset }
	got := engine.AckRanges(recs, at, engine.AckRelease)
	want := []engine.Acknowledgement{
		{Topic: "t", Partition: 0, First: 2, Last: 2, Type: engine.AckRelease},
		{Topic: "t", Partition: 1, First: 9, Last: 9, Type: engine.AckRelease},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AckRanges = %v, want %v", got, want)
	}
}
