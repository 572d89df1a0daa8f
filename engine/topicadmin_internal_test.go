package engine

import (
	"testing"
)

// cutDeletion writes only the first record of a deletion and closes the
// engine: what a crash leaves when it cuts the deletion's flush after the
// meta log (or the group log), which flush before the share-state log.
func cutDeletion(t *testing.T, e *Engine, write func(op *syncPoint)) {
	t.Helper()
	var op syncPoint
	write(&op)
	if err := e.waitLocked(&op); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

func openEarliest(t *testing.T, dir string) *Engine {
	t.Helper()
	g := DefaultGroupConfig()
	g.AutoOffsetReset = ResetEarliest
	e, err := New(WithDataDir(dir), WithGroupDefaults(g))
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// shareStateOn consumes and accepts topic's records as group, leaving
// share state in the share-state log.
func shareStateOn(t *testing.T, e *Engine, group, topic string) {
	t.Helper()
	if _, err := e.Produce(topic, 0, []ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	m, err := e.JoinShareGroup(group, []string{topic}, AckExplicit)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := m.Poll(10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("poll: %d records, %v", len(recs), err)
	}
	if err := m.Acknowledge([]Acknowledgement{{Topic: topic, First: 0, Last: 1, Type: AckAccept}}); err != nil {
		t.Fatal(err)
	}
	if err := m.Leave(); err != nil {
		t.Fatal(err)
	}
}

// TestRecoveryRepairsCutTopicDeletion: with the topic's delete record
// durable and its share drops lost, recovery writes the drops, so a topic
// created again under the name never gets the old incarnation's share
// state at a later recovery.
func TestRecoveryRepairsCutTopicDeletion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := openEarliest(t, dir)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	shareStateOn(t, e, "g", "t")
	e.topicsMu.RLock()
	id := e.topics["t"].id
	e.topicsMu.RUnlock()
	cutDeletion(t, e, func(op *syncPoint) { e.jTopicDelete(op, id) })

	e = openEarliest(t, dir)
	if _, err := e.Partitions("t"); err == nil {
		t.Fatal("the deleted topic came back")
	}
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openEarliest(t, dir)
	if info, err := e.SharePartition("g", TopicPartition{Topic: "t"}); err == nil {
		t.Fatalf("the new incarnation has the old one's share state (SPSO %d)", info.SPSO)
	}
}

// TestRecoveryRepairsCutGroupDeletion: with a share group's delete record
// durable and its share drops lost, recovery does not bring the group
// back from its share state.
func TestRecoveryRepairsCutGroupDeletion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := openEarliest(t, dir)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	shareStateOn(t, e, "g", "t")
	cutDeletion(t, e, func(op *syncPoint) { e.jGroupDelete(op, "g") })

	e = openEarliest(t, dir)
	if gs := e.ShareGroups(); len(gs) != 0 {
		t.Fatalf("share groups after recovery: %v, want none", gs)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openEarliest(t, dir)
	if gs := e.ShareGroups(); len(gs) != 0 {
		t.Fatalf("share groups after a second recovery: %v, want none", gs)
	}
	m, err := e.JoinShareGroup("g", []string{"t"}, AckExplicit)
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := m.Poll(10); err != nil || len(recs) != 2 {
		t.Fatalf("a new g polled %d records, %v; want both again from the reset point", len(recs), err)
	}
}

// TestRecoveryRepairsCutOffsetDeletion: with a topic's delete record
// durable and the classic groups' offsets without it lost, recovery drops
// the offsets, so a topic created again under the name starts without them.
func TestRecoveryRepairsCutOffsetDeletion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := openEarliest(t, dir)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	if err := e.CommitOffsets("c", map[TopicPartition]int64{{Topic: "t"}: 5, {Topic: "other"}: 1}); err != nil {
		t.Fatal(err)
	}
	e.topicsMu.RLock()
	id := e.topics["t"].id
	e.topicsMu.RUnlock()
	cutDeletion(t, e, func(op *syncPoint) { e.jTopicDelete(op, id) })

	e = openEarliest(t, dir)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openEarliest(t, dir)
	if off, ok := e.CommittedOffset("c", TopicPartition{Topic: "t"}); ok {
		t.Fatalf("the new incarnation has the old one's committed offset %d", off)
	}
	if off, ok := e.CommittedOffset("c", TopicPartition{Topic: "other"}); !ok || off != 1 {
		t.Fatalf("offset of a topic never deleted: %d %v, want 1", off, ok)
	}
}
