// This file holds the real-Kafka check of acknowledgements of records the
// member no longer holds: the same raw requests (kmsg) against Kafka and
// against sharebench serve, case by case — the lock expired and the record
// is AVAILABLE again, another member acquired it, another member accepted
// it (below the share-partition start offset), the member left the group
// with its share session open, the member closed its share session — and
// both must answer the codes docs/design.md §3.2 records, alike, and apply
// the acknowledgement (or not) alike.

package kafkait

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
)

// staleLock is the share group's record lock: the floor scripts/kafka
// allows, so a lock expires within the test.
const staleLock = time.Second

// rawMember is one share-group member driven by raw requests.
type rawMember struct {
	t       *testing.T
	cl      *kgo.Client
	group   string
	topic   string
	topicID [16]byte
	id      string
	epoch   int32
	session int32
}

func newRawMember(t *testing.T, cl *kgo.Client, group, topic string, topicID [16]byte) *rawMember {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return &rawMember{t: t, cl: cl, group: group, topic: topic, topicID: topicID, id: base64.RawURLEncoding.EncodeToString(b[:])}
}

func reqCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// heartbeat sends one ShareGroupHeartbeat (leave: epoch -1) and reports
// whether the member's assignment holds the topic's partition 0.
func (m *rawMember) heartbeat(leave bool) bool {
	m.t.Helper()
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch = m.group, m.id, m.epoch
	if leave {
		req.MemberEpoch = -1
	} else {
		req.SubscribedTopicNames = []string{m.topic}
	}
	resp, err := req.RequestWith(reqCtx(m.t), m.cl)
	if err != nil {
		m.t.Fatalf("%s heartbeat: %v", m.id, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("%s heartbeat: %v", m.id, err)
	}
	m.epoch = resp.MemberEpoch
	if resp.Assignment == nil {
		return false
	}
	for _, tp := range resp.Assignment.TopicPartitions {
		if tp.TopicID == m.topicID {
			return true
		}
	}
	return false
}

// fetch sends one ShareFetch without acknowledgements and returns the
// offsets it acquired.
func (m *rawMember) fetch() []int64 {
	m.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID = kmsg.StringPtr(m.group), kmsg.StringPtr(m.id)
	req.ShareSessionEpoch, req.MaxRecords, req.BatchSize, req.MaxBytes, req.MaxWaitMillis = m.session, 10, 10, 1<<20, 500
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = m.topicID
	rt.Partitions = []kmsg.ShareFetchRequestTopicPartition{kmsg.NewShareFetchRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(reqCtx(m.t), m.cl)
	if err != nil {
		m.t.Fatalf("%s share fetch: %v", m.id, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("%s share fetch (session epoch %d): %v", m.id, m.session, err)
	}
	m.session++
	var got []int64
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			for _, a := range p.AcquiredRecords {
				for o := a.FirstOffset; o <= a.LastOffset; o++ {
					got = append(got, o)
				}
			}
		}
	}
	return got
}

// acquire joins (until assigned) and fetches until it holds n records,
// heartbeating others meanwhile so their sessions stay alive. Waiting is
// bounded by the request contexts and a round limit, never asserted.
func (m *rawMember) acquire(n int, others ...*rawMember) []int64 {
	m.t.Helper()
	for round := 0; ; round++ {
		if round > 120 {
			m.t.Fatalf("%s acquired nothing in %d rounds", m.id, round)
		}
		for _, o := range others {
			o.heartbeat(false)
		}
		if !m.heartbeat(false) {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if got := m.fetch(); len(got) > 0 {
			if len(got) != n {
				m.t.Fatalf("%s acquired %v, want %d records", m.id, got, n)
			}
			return got
		}
	}
}

// acknowledge sends one ShareAcknowledge of [0, last] with type typ and
// returns the top-level and the partition's codes.
func (m *rawMember) acknowledge(typ int8, last int64) (top, part int16) {
	m.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(m.group), kmsg.StringPtr(m.id), m.session
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = m.topicID
	rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
	b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = 0, last, []int8{typ}
	rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(reqCtx(m.t), m.cl)
	if err != nil {
		m.t.Fatalf("%s share acknowledge: %v", m.id, err)
	}
	if resp.ErrorCode == 0 {
		m.session++
	}
	part = noPartition
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			part = p.ErrorCode
		}
	}
	return resp.ErrorCode, part
}

// noPartition is acknowledge's partition code for a response without
// the partition (a request refused at the top level).
const noPartition = -1

// closeSession closes the member's share session with an empty
// ShareAcknowledge at epoch -1.
func (m *rawMember) closeSession() {
	m.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(m.group), kmsg.StringPtr(m.id), -1
	resp, err := req.RequestWith(reqCtx(m.t), m.cl)
	if err != nil {
		m.t.Fatalf("%s closing its share session: %v", m.id, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		m.t.Fatalf("%s closing its share session: %v", m.id, err)
	}
}

// staleCase is one way a member loses its records before acknowledging
// them, with the codes Kafka answers.
type staleCase struct {
	name      string
	away      func(a, b *rawMember)
	top, part int16
	// lock is the group's record lock (staleLock when zero): the cases
	// that need A's lock to outlive the test set a long one.
	lock time.Duration
	// after, when set, checks after A's reject what it did, as a client
	// sees it: env produces more records and reads the share-group start
	// offset.
	after func(a, b *rawMember, env *staleEnv)
}

// staleEnv produces to the case's input topic and reads its share-group
// start offset (DescribeShareGroupOffsets).
type staleEnv struct {
	t   *testing.T
	cl  *kgo.Client
	adm *kadm.Client
	cfg targets.Config
}

func (e *staleEnv) produce(v string) {
	e.t.Helper()
	if err := e.cl.ProduceSync(reqCtx(e.t), &kgo.Record{Topic: e.cfg.InputTopic, Value: []byte(v)}).FirstErr(); err != nil {
		e.t.Fatalf("produce: %v", err)
	}
}

func (e *staleEnv) startOffset() int64 {
	e.t.Helper()
	r, err := e.adm.DescribeShareGroupOffsets(reqCtx(e.t), e.cfg.Group)
	if err != nil {
		e.t.Fatalf("describing the offsets of %s: %v", e.cfg.Group, err)
	}
	o, ok := r[e.cfg.Group].Offsets[e.cfg.InputTopic][0]
	if !ok || o.Err != nil {
		e.t.Fatalf("start offset of %s/0 in %s: %v (present %v)", e.cfg.InputTopic, e.cfg.Group, o.Err, ok)
	}
	return o.StartOffset
}

func staleCases() []staleCase {
	const accept, release = 1, 2
	return []staleCase{
		// B acquiring them proves A's lock expired; B's release makes them
		// AVAILABLE again.
		{"lock expired, available again", func(a, b *rawMember) {
			b.acquire(2, a)
			if top, part := b.acknowledge(release, 1); top != 0 || part != 0 {
				a.t.Fatalf("B releases: codes %d/%d", top, part)
			}
		}, 0, kerr.InvalidRecordState.Code, 0, nil},
		{"redelivered to another member", func(a, b *rawMember) {
			b.acquire(2, a)
		}, 0, kerr.InvalidRecordState.Code, 0, nil},
		{"accepted by another member (below the start offset)", func(a, b *rawMember) {
			b.acquire(2, a)
			if top, part := b.acknowledge(accept, 1); top != 0 || part != 0 {
				a.t.Fatalf("B accepts: codes %d/%d", top, part)
			}
		}, 0, 0, 0, nil},
		// Kafka keeps the share session (and A's locks) of a member that
		// left the group: the reject applies. Offset 2, produced after,
		// is B's first acquisition, and B's accept of it persists the
		// start offset past 0..1 (Kafka writes the start offset it had
		// before the accept, hence "at least 2", not 3): records 0..1
		// are terminal, not waiting to be redelivered.
		{"left the group, share session open", func(a, _ *rawMember) {
			a.heartbeat(true)
		}, 0, 0, 30 * time.Second, func(a, b *rawMember, env *staleEnv) {
			env.produce("2")
			if got := b.acquire(1); got[0] != 2 {
				a.t.Fatalf("B acquired %v after A's reject, want offset 2 only", got)
			}
			if top, part := b.acknowledge(accept, 2); top != 0 || part != 0 {
				a.t.Fatalf("B accepts 0..2: codes %d/%d", top, part)
			}
			if so := env.startOffset(); so < 2 {
				a.t.Fatalf("share-group start offset %d after A's reject and B's accept, want at least 2 (0..1 archived)", so)
			}
		}},
		// A closed share session released A's records at once; the
		// reject on it is refused at the top level and applies to
		// nothing: B acquires 0..1 again.
		{"share session closed", func(a, _ *rawMember) {
			a.closeSession()
		}, kerr.ShareSessionNotFound.Code, noPartition, 30 * time.Second, func(a, b *rawMember, _ *staleEnv) {
			if got := b.acquire(2, a); got[0] != 0 || got[1] != 1 {
				a.t.Fatalf("B acquired %v after A's refused reject, want 0..1", got)
			}
		}},
	}
}

// staleAckCodes runs every case against the broker at addr (fresh topic and
// group each) and returns each case's codes for A's reject of 0..1.
func staleAckCodes(t *testing.T, addr, prefix string) map[string][2]int16 {
	t.Helper()
	ctx := reqCtx(t)
	tg, err := kafkatarget.New(ctx, kafkatarget.Options{Brokers: []string{addr}, PingTimeout: pingTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	out := map[string][2]int16{}
	for i, tc := range staleCases() {
		lock := staleLock
		if tc.lock > 0 {
			lock = tc.lock
		}
		cfg := targets.Config{
			InputTopic: fmt.Sprintf("%s-stale-%d-in", prefix, i), OutputTopic: fmt.Sprintf("%s-stale-%d-out", prefix, i),
			InputPartitions: 1, OutputPartitions: 1, Group: fmt.Sprintf("%s-stale-%d", prefix, i),
			LockDuration: lock, DeliveryLimit: 5, MaxRecordLocks: 100, MaxPollRecords: 10, TransactionTimeout: time.Minute,
		}
		if err := tg.Setup(ctx, cfg); err != nil {
			t.Fatalf("%s: setup: %v", tc.name, err)
		}
		for j := range 2 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: cfg.InputTopic, Value: []byte(strconv.Itoa(j))}).FirstErr(); err != nil {
				t.Fatalf("%s: produce: %v", tc.name, err)
			}
		}
		md := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(cfg.InputTopic)
		md.Topics = append(md.Topics, mt)
		mresp, err := md.RequestWith(ctx, cl)
		if err != nil || len(mresp.Topics) != 1 {
			t.Fatalf("%s: metadata of %s: %v", tc.name, cfg.InputTopic, err)
		}
		id := mresp.Topics[0].TopicID
		a := newRawMember(t, cl, cfg.Group, cfg.InputTopic, id)
		b := newRawMember(t, cl, cfg.Group, cfg.InputTopic, id)
		a.acquire(2)
		tc.away(a, b)
		top, part := a.acknowledge(3, 1) // reject
		out[tc.name] = [2]int16{top, part}
		if tc.after != nil {
			tc.after(a, b, &staleEnv{t: t, cl: cl, adm: adm, cfg: cfg})
		}
	}
	return out
}

// TestStaleAcksBesideServe: Kafka and serve answer a member's reject of
// records it no longer holds, or holds on a session outside the group,
// alike, with the codes of docs/design.md §3.2, and apply it alike.
func TestStaleAcksBesideServe(t *testing.T) {
	b := brokers(t)
	s, _ := startServe(t)
	prefix := "sb-stale-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	kafka := staleAckCodes(t, b, prefix)
	served := staleAckCodes(t, s.Addr(), prefix)
	for _, tc := range staleCases() {
		want := [2]int16{tc.top, tc.part}
		k, sv := kafka[tc.name], served[tc.name]
		if k != want || sv != want {
			t.Errorf("%s: Kafka answered %v (%v / %v), serve %v (%v / %v), want %v for both",
				tc.name, k, kerr.ErrorForCode(k[0]), kerr.ErrorForCode(k[1]), sv, kerr.ErrorForCode(sv[0]), kerr.ErrorForCode(sv[1]), want)
		}
	}
}
