package engine_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sharebench/sharebench/engine"
)

// reopen closes e and opens its data directory again, as a restart of the
// process does.
func reopen(t *testing.T, e *engine.Engine, dir string, opts ...engine.Option) *engine.Engine {
	t.Helper()
	if err := e.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	e2, err := engine.New(append([]engine.Option{engine.WithDataDir(dir)}, opts...)...)
	if err != nil {
		t.Fatalf("reopen %s: %v", dir, err)
	}
	t.Cleanup(func() { e2.Close() })
	return e2
}

func produce(t *testing.T, e *engine.Engine, topic string, part int32, n int) {
	t.Helper()
	recs := make([]engine.ProduceRecord, n)
	for i := range recs {
		recs[i].Value = []byte{byte(i)}
	}
	if _, err := e.Produce(topic, part, recs); err != nil {
		t.Fatalf("produce to %s-%d: %v", topic, part, err)
	}
}

// consumeAll joins group, polls every record there is, accepts them and
// leaves; it returns how many it got.
func consumeAll(t *testing.T, e *engine.Engine, group, topic string) int {
	t.Helper()
	m, err := e.JoinShareGroup(group, []string{topic}, engine.AckExplicit)
	if err != nil {
		t.Fatalf("join %s: %v", group, err)
	}
	got := 0
	for {
		recs, err := m.Poll(100)
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if len(recs) == 0 {
			break
		}
		got += len(recs)
		var acks []engine.Acknowledgement
		for _, r := range recs {
			acks = append(acks, engine.Acknowledgement{Topic: r.Topic, Partition: r.Partition, First: r.Offset, Last: r.Offset, Type: engine.AckAccept})
		}
		if err := m.Acknowledge(acks); err != nil {
			t.Fatalf("ack: %v", err)
		}
	}
	if err := m.Leave(); err != nil {
		t.Fatalf("leave: %v", err)
	}
	return got
}

func earliest() engine.Option {
	g := engine.DefaultGroupConfig()
	g.AutoOffsetReset = engine.ResetEarliest
	return engine.WithGroupDefaults(g)
}

// TestDeleteTopicDurable: a deletion survives restarts (by Close and by
// Crash), takes the topic's records, share state and committed offsets
// with it, and a topic created again under the name is new: empty, with a
// new id, and no share state of the old one comes back at the next
// recovery.
func TestDeleteTopicDurable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e, err := engine.New(engine.WithDataDir(dir), earliest())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("t", 2); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("keep", 1); err != nil {
		t.Fatal(err)
	}
	produce(t, e, "t", 0, 5)
	produce(t, e, "keep", 0, 3)
	if got := consumeAll(t, e, "g", "t"); got != 5 {
		t.Fatalf("consumed %d before the deletion, want 5", got)
	}
	if err := e.CommitOffsets("c", map[engine.TopicPartition]int64{{Topic: "t"}: 4, {Topic: "keep"}: 2}); err != nil {
		t.Fatal(err)
	}
	oldID, err := e.TopicID("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteTopic("t"); err != nil {
		t.Fatalf("DeleteTopic with a data dir: %v", err)
	}
	if err := e.Crash(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Restart(); err != nil {
		t.Fatalf("restart after the deletion: %v", err)
	}
	e = reopen(t, e, dir, earliest())
	if _, err := e.Partitions("t"); !errors.Is(err, engine.ErrUnknownTopicOrPartition) {
		t.Fatalf("Partitions(t) after delete and restart: %v, want ErrUnknownTopicOrPartition", err)
	}
	if _, err := e.TopicByID(oldID); !errors.Is(err, engine.ErrUnknownTopicID) {
		t.Fatalf("TopicByID(old id) after restart: %v, want ErrUnknownTopicID", err)
	}
	offs := e.CommittedOffsets("c")
	if _, ok := offs[engine.TopicPartition{Topic: "t"}]; ok || offs[engine.TopicPartition{Topic: "keep"}] != 2 {
		t.Fatalf("committed offsets after delete and restart: %v, want only keep-0 at 2", offs)
	}
	if _, hw, _, err := e.Offsets(engine.TopicPartition{Topic: "keep"}); err != nil || hw != 3 {
		t.Fatalf("keep-0 after restart: hw %d, %v; want 3", hw, err)
	}

	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatalf("create again: %v", err)
	}
	newID, err := e.TopicID("t")
	if err != nil || newID == oldID {
		t.Fatalf("id of the new incarnation: %v, %v; want one other than %v", newID, err, oldID)
	}
	if _, err := e.SharePartition("g", engine.TopicPartition{Topic: "t"}); err == nil {
		t.Fatalf("the new topic has g's share state of the old one")
	}
	e = reopen(t, e, dir, earliest())
	if id, err := e.TopicID("t"); err != nil || id != newID {
		t.Fatalf("id after restart: %v, %v; want %v", id, err, newID)
	}
	if _, hw, _, err := e.Offsets(engine.TopicPartition{Topic: "t"}); err != nil || hw != 0 {
		t.Fatalf("new t-0 after restart: hw %d, %v; want an empty partition", hw, err)
	}
	if _, err := e.SharePartition("g", engine.TopicPartition{Topic: "t"}); err == nil {
		t.Fatalf("recovery brought g's share state of the deleted incarnation back")
	}
	produce(t, e, "t", 0, 2)
	if got := consumeAll(t, e, "g", "t"); got != 2 {
		t.Fatalf("g consumed %d of the new topic, want its 2 records", got)
	}
}

// TestTopicIDs: ids come from the source the engine is given, are version
// 4 UUIDs, and name one incarnation.
func TestTopicIDs(t *testing.T) {
	t.Parallel()
	src := bytes.Repeat([]byte{0xff}, 16)
	src = append(src, bytes.Repeat([]byte{0x11}, 16)...)
	e, err := engine.New(engine.WithTopicIDSource(bytes.NewReader(src)))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.CreateTopic("a", 1); err != nil {
		t.Fatal(err)
	}
	id, _ := e.TopicID("a")
	want := engine.TopicID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x4f, 0xff, 0xbf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if id != want {
		t.Fatalf("id of a: %x, want %x", id, want)
	}
	if name, err := e.TopicByID(id); err != nil || name != "a" {
		t.Fatalf("TopicByID: %q, %v", name, err)
	}
	if err := e.DeleteTopic("a"); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("a", 1); err != nil {
		t.Fatal(err)
	}
	if id2, _ := e.TopicID("a"); id2 == id {
		t.Fatalf("re-created topic kept its id %v", id)
	}
	if err := e.CreateTopic("b", 1); err == nil || !errors.Is(err, engine.ErrInvalidConfig) {
		t.Fatalf("create with the id source exhausted: %v, want ErrInvalidConfig", err)
	}
}

// TestCreatePartitions: grow only, ValidateOnly changes nothing, new
// partitions take records at once, a share group's members see them, and
// the count survives a restart.
func TestCreatePartitions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e, err := engine.New(engine.WithDataDir(dir), earliest())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("t", 2); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		count    int32
		validate bool
		want     error
	}{
		{2, false, engine.ErrInvalidPartitions},
		{1, false, engine.ErrInvalidPartitions},
		{4, true, nil},
	} {
		if err := e.CreatePartitions("t", c.count, c.validate); !errors.Is(err, c.want) {
			t.Errorf("CreatePartitions(t, %d, validate %v): %v, want %v", c.count, c.validate, err, c.want)
		}
	}
	if n, _ := e.Partitions("t"); n != 2 {
		t.Fatalf("partitions after the refusals and the validation: %d, want 2", n)
	}
	if err := e.CreatePartitions("nope", 3, false); !errors.Is(err, engine.ErrUnknownTopicOrPartition) {
		t.Fatalf("CreatePartitions(nope): %v", err)
	}
	produce(t, e, "t", 0, 1)
	if got := consumeAll(t, e, "g", "t"); got != 1 {
		t.Fatalf("consumed %d, want 1", got)
	}
	if err := e.CreatePartitions("t", 4, false); err != nil {
		t.Fatalf("CreatePartitions(t, 4): %v", err)
	}
	produce(t, e, "t", 3, 2)
	if got := consumeAll(t, e, "g", "t"); got != 2 {
		t.Fatalf("g consumed %d after the growth, want the 2 records of partition 3", got)
	}
	e = reopen(t, e, dir, earliest())
	if n, _ := e.Partitions("t"); n != 4 {
		t.Fatalf("partitions after restart: %d, want 4", n)
	}
	if _, hw, _, err := e.Offsets(engine.TopicPartition{Topic: "t", Partition: 3}); err != nil || hw != 2 {
		t.Fatalf("t-3 after restart: hw %d, %v; want 2", hw, err)
	}
}

// TestDeleteGroup: members block a deletion, an unknown group fails, and
// a share group deleted (durably) starts again at the reset point.
func TestDeleteGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e, err := engine.New(engine.WithDataDir(dir), earliest())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	produce(t, e, "t", 0, 3)
	if got := consumeAll(t, e, "g", "t"); got != 3 {
		t.Fatalf("consumed %d, want 3", got)
	}
	m, err := e.JoinShareGroup("g", []string{"t"}, engine.AckExplicit)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteGroup("g"); !errors.Is(err, engine.ErrGroupNotEmpty) {
		t.Fatalf("DeleteGroup with a member: %v, want ErrGroupNotEmpty", err)
	}
	if err := m.Leave(); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteGroup("nope"); !errors.Is(err, engine.ErrUnknownGroup) {
		t.Fatalf("DeleteGroup(nope): %v, want ErrUnknownGroup", err)
	}
	if err := e.CommitOffsets("c", map[engine.TopicPartition]int64{{Topic: "t"}: 2}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"g", "c"} {
		if err := e.DeleteGroup(g); err != nil {
			t.Fatalf("DeleteGroup(%s): %v", g, err)
		}
	}
	e = reopen(t, e, dir, earliest())
	if groups := e.ShareGroups(); len(groups) != 0 {
		t.Fatalf("share groups after delete and restart: %v", groups)
	}
	if offs := e.CommittedOffsets("c"); offs != nil {
		t.Fatalf("offsets of the deleted classic group after restart: %v", offs)
	}
	if got := consumeAll(t, e, "g", "t"); got != 3 {
		t.Fatalf("the new g consumed %d, want all 3 again (from the reset point)", got)
	}
	// The id is free for a group of the other type.
	if err := e.CommitOffsets("g2", map[engine.TopicPartition]int64{{Topic: "t"}: 1}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteCommittedOffsets("g2", []engine.TopicPartition{{Topic: "t"}}); err != nil {
		t.Fatalf("DeleteCommittedOffsets: %v", err)
	}
	if err := e.DeleteCommittedOffsets("g", []engine.TopicPartition{{Topic: "t"}}); !errors.Is(err, engine.ErrGroupTypeMismatch) {
		t.Fatalf("DeleteCommittedOffsets of a share group: %v, want ErrGroupTypeMismatch", err)
	}
	if err := e.DeleteGroup("g"); err != nil {
		t.Fatal(err)
	}
	if err := e.CommitOffsets("g", map[engine.TopicPartition]int64{{Topic: "t"}: 1}); err != nil {
		t.Fatalf("a classic group under a deleted share group's id: %v", err)
	}
	e = reopen(t, e, dir, earliest())
	if off, ok := e.CommittedOffset("g2", engine.TopicPartition{Topic: "t"}); ok {
		t.Fatalf("deleted offset came back: %d", off)
	}
	if off, ok := e.CommittedOffset("g", engine.TopicPartition{Topic: "t"}); !ok || off != 1 {
		t.Fatalf("classic g after restart: %d %v, want 1", off, ok)
	}
}
