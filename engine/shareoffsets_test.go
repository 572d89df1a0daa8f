package engine_test

import (
	"errors"
	"testing"

	"github.com/sharebench/sharebench/engine"
)

// Resetting a share group's offsets moves its share partitions' start
// offsets (a member then acquires from there, delivery count 1 again),
// survives a restart of a durable engine, and is refused for a group with
// members or an offset outside the log; deleting them makes the next
// member start where share.auto.offset.reset says.
func TestShareGroupOffsetChanges(t *testing.T) {
	for _, durable := range []bool{false, true} {
		name := map[bool]string{false: "in-memory", true: "durable"}[durable]
		t.Run(name, func(t *testing.T) {
			var opts []engine.Option
			if durable {
				opts = append(opts, engine.WithDataDir(t.TempDir()))
			}
			e, err := engine.New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if err := e.CreateTopic("t", 1); err != nil {
				t.Fatal(err)
			}
			if err := e.SetShareGroupConfig("g", engine.GroupConfig{LockDuration: 30e9, DeliveryLimit: 5, MaxRecordLocks: 100, AutoOffsetReset: engine.ResetEarliest}); err != nil {
				t.Fatal(err)
			}
			recs := make([]engine.ProduceRecord, 10)
			for i := range recs {
				recs[i].Value = []byte{byte(i)}
			}
			if _, err := e.Produce("t", 0, recs); err != nil {
				t.Fatal(err)
			}
			tp := engine.TopicPartition{Topic: "t"}
			m, err := e.JoinShareGroup("g", []string{"t"}, engine.AckExplicit)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Poll(10)
			if err != nil || len(got) != 10 {
				t.Fatalf("poll: %d records, %v", len(got), err)
			}
			if err := m.Acknowledge([]engine.Acknowledgement{{Topic: "t", First: 0, Last: 9, Type: engine.AckAccept}}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.AlterShareGroupOffsets("g", map[engine.TopicPartition]int64{tp: 3}); !errors.Is(err, engine.ErrGroupNotEmpty) {
				t.Fatalf("alter with a member: %v, want ErrGroupNotEmpty", err)
			}
			if err := m.Leave(); err != nil {
				t.Fatal(err)
			}
			if _, err := e.AlterShareGroupOffsets("nope", map[engine.TopicPartition]int64{tp: 3}); !errors.Is(err, engine.ErrUnknownGroup) {
				t.Fatalf("alter of an unknown group: %v", err)
			}
			failed, err := e.AlterShareGroupOffsets("g", map[engine.TopicPartition]int64{tp: 11})
			if err != nil || !errors.Is(failed[tp], engine.ErrLogOffsetOutOfRange) {
				t.Fatalf("alter past the high watermark: %v, %v", failed, err)
			}
			if failed, err := e.AlterShareGroupOffsets("g", map[engine.TopicPartition]int64{tp: 3}); err != nil || len(failed) != 0 {
				t.Fatalf("alter to 3: %v, %v", failed, err)
			}
			if durable {
				if _, err := e.Restart(); err != nil {
					t.Fatal(err)
				}
			}
			info, err := e.SharePartition("g", tp)
			if err != nil || info.SPSO != 3 {
				t.Fatalf("share partition after the reset: SPSO %d, %v; want 3", info.SPSO, err)
			}
			m, err = e.JoinShareGroup("g", []string{"t"}, engine.AckExplicit)
			if err != nil {
				t.Fatal(err)
			}
			got, err = m.Poll(10)
			if err != nil || len(got) != 7 || got[0].Offset != 3 || got[0].DeliveryCount != 1 {
				t.Fatalf("poll after the reset: %d records from %v, %v; want 7 from offset 3, delivery 1", len(got), first(got), err)
			}
			if err := m.Leave(); err != nil {
				t.Fatal(err)
			}
			failed, err = e.DeleteShareGroupOffsets("g", []string{"t"})
			if err != nil || len(failed) != 0 {
				t.Fatalf("delete: %v, %v", failed, err)
			}
			if durable {
				// The deletion is journaled: a recovery does not bring
				// the share partition back.
				if _, err := e.Restart(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := e.SharePartition("g", tp); !errors.Is(err, engine.ErrUnknownGroup) {
				t.Fatalf("share partition after delete: %v, want none", err)
			}
			m, err = e.JoinShareGroup("g", []string{"t"}, engine.AckExplicit)
			if err != nil {
				t.Fatal(err)
			}
			got, err = m.Poll(20)
			if err != nil || len(got) != 10 || got[0].Offset != 0 {
				t.Fatalf("poll after delete: %d records from %v, %v; want 10 from 0 (earliest)", len(got), first(got), err)
			}
		})
	}
}

func first(recs []engine.Record) any {
	if len(recs) == 0 {
		return "none"
	}
	return recs[0].Offset
}
