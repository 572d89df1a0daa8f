// This file holds the journal's record codec: one typed record per durable
// state change (topic created, topic configs, group configuration, classic
// group offsets, transaction state, partition batch, marker and log start,
// share-state snapshot and delta, share history), each encoded as a type
// byte followed by varints and length-prefixed bytes. Decoding checks every
// length against the bytes left, so arbitrary input gives an error, never a
// panic or an unbounded allocation.

package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/sharebench/sharebench/engine/internal/plog"
	"github.com/sharebench/sharebench/engine/internal/sharepart"
)

// Record types. The numbers are part of the on-disk format.
const (
	recTopic           byte = 1 // a topic of a build without topic ids
	recTopicCreate     byte = 2
	recTopicDelete     byte = 3
	recTopicPartitions byte = 4
	recTopicConfigs    byte = 5
	recGroupDelete     byte = 15
	recShareGroup      byte = 10
	recPendingOffset   byte = 12
	recOffsetMarker    byte = 13
	recClassicState    byte = 14
	recTxn             byte = 20
	recBatch           byte = 30
	recMarker          byte = 31
	recLogStart        byte = 32
	recShareSnapshot   byte = 40
	recShareDelta      byte = 41
	recShareDrop       byte = 42
	recHistory         byte = 50
	recHistoryDrop     byte = 51
)

// errBadRecord is wrapped by every decoding failure.
var errBadRecord = errors.New("engine: malformed journal record")

type enc struct{ b []byte }

func (e *enc) u8(v byte)     { e.b = append(e.b, v) }
func (e *enc) uvar(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) svar(v int64)  { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) str(s string)  { e.uvar(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) boolean(v bool) {
	if v {
		e.u8(1)
	} else {
		e.u8(0)
	}
}
func (e *enc) tp(tp TopicPartition) {
	e.str(tp.Topic)
	e.svar(int64(tp.Partition))
}

// nbytes encodes nil as 0 and b as len(b)+1, keeping null keys null.
func (e *enc) nbytes(b []byte) {
	if b == nil {
		e.uvar(0)
		return
	}
	e.uvar(uint64(len(b)) + 1)
	e.b = append(e.b, b...)
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errBadRecord, fmt.Sprintf(format, args...))
	}
}

func (d *dec) u8() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) uvar() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) svar() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads an element count, each element needing at least min bytes.
func (d *dec) count(min int) int {
	n := d.uvar()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.fail("count %d exceeds the %d bytes left", n, len(d.b))
		return 0
	}
	return int(n)
}

func (d *dec) raw(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("length %d exceeds the %d bytes left", n, len(d.b))
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string { return string(d.raw(d.uvar())) }

func (d *dec) nbytes() []byte {
	n := d.uvar()
	if n == 0 || d.err != nil {
		return nil
	}
	return d.raw(n - 1)
}

func (d *dec) boolean() bool {
	switch v := d.u8(); v {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail("bool %d", v)
		return false
	}
}

func (d *dec) i16() int16 {
	v := d.svar()
	if v < math.MinInt16 || v > math.MaxInt16 {
		d.fail("int16 %d", v)
	}
	return int16(v)
}

func (d *dec) i32() int32 {
	v := d.svar()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("int32 %d", v)
	}
	return int32(v)
}

// offset reads a non-negative log offset.
func (d *dec) offset() int64 {
	v := d.svar()
	if v < 0 || v >= 1<<62 {
		d.fail("offset %d", v)
	}
	return v
}

func (d *dec) tp() TopicPartition {
	tp := TopicPartition{Topic: d.str(), Partition: d.i32()}
	if d.err == nil && (tp.Topic == "" || tp.Partition < 0) {
		d.fail("partition %s", tp)
	}
	return tp
}

// end fails on trailing bytes and returns the decoder's error.
func (d *dec) end() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	return d.err
}

// --- metadata ---

type topicRecord struct {
	id         uint64
	name       string
	partitions int32
	uuid       TopicID
	configs    map[string]string // nil when the record carries none
}

// encode writes the topic's configs after its id only when it has some,
// so a topic without configs is the record older builds wrote.
func (r *topicRecord) encode(e *enc) {
	e.u8(recTopicCreate)
	e.uvar(r.id)
	e.str(r.name)
	e.svar(int64(r.partitions))
	e.b = append(e.b, r.uuid[:]...)
	if len(r.configs) > 0 {
		encodeTopicConfigs(e, r.configs)
	}
}

// encodeTopicConfigs writes configs sorted by name, so the same configs
// always encode to the same bytes.
func encodeTopicConfigs(e *enc, configs map[string]string) {
	names := make([]string, 0, len(configs))
	for n := range configs {
		names = append(names, n)
	}
	sort.Strings(names)
	e.uvar(uint64(len(names)))
	for _, n := range names {
		e.str(n)
		e.str(configs[n])
	}
}

func decodeTopicConfigs(d *dec) map[string]string {
	n := d.count(2)
	m := make(map[string]string, n)
	for range n {
		name, v := d.str(), d.str()
		if d.err != nil {
			break
		}
		if _, dup := m[name]; dup || name == "" {
			d.fail("topic config %q twice or unnamed", name)
			break
		}
		m[name] = v
	}
	return m
}

// decode reads a topic record of type typ: recTopic carries no id, and
// its topic keeps the one older builds derived from its name.
func (r *topicRecord) decode(d *dec, typ byte) {
	r.id, r.name, r.partitions = d.uvar(), d.str(), d.i32()
	if d.err == nil && (r.name == "" || r.partitions < 1 || r.partitions > 1<<20) {
		d.fail("topic %q with %d partitions", r.name, r.partitions)
	}
	if typ == recTopic {
		r.uuid = legacyTopicID(r.name)
		return
	}
	copy(r.uuid[:], d.raw(uint64(len(r.uuid))))
	if d.err == nil && len(d.b) > 0 {
		r.configs = decodeTopicConfigs(d)
	}
}

// --- groups ---

func encodeShareGroup(e *enc, group string, c GroupConfig) {
	e.u8(recShareGroup)
	e.str(group)
	e.svar(int64(c.LockDuration))
	e.uvar(uint64(c.DeliveryLimit))
	e.uvar(uint64(c.MaxRecordLocks))
	e.u8(byte(c.AutoOffsetReset))
	e.u8(byte(c.Isolation))
	e.u8(byte(c.AcquireMode))
	e.str(c.DLQTopic)
	e.boolean(c.DLQCopyRecord)
}

func decodeShareGroup(d *dec) (string, GroupConfig) {
	g := d.str()
	c := GroupConfig{LockDuration: time.Duration(d.svar()), DeliveryLimit: int(min(d.uvar(), 1<<30)),
		MaxRecordLocks: int(min(d.uvar(), 1<<30)), AutoOffsetReset: AutoOffsetReset(d.u8()), Isolation: IsolationLevel(d.u8())}
	if d.err == nil && len(d.b) > 0 {
		// Written since share.acquire.mode; older records mean record_limit.
		c.AcquireMode = AcquireMode(d.u8())
	}
	if d.err == nil && len(d.b) > 0 {
		c.DLQTopic, c.DLQCopyRecord = d.str(), d.boolean()
	}
	if d.err == nil {
		if err := c.validate(); err != nil || c.AutoOffsetReset > ResetEarliest || c.Isolation > ReadCommitted || g == "" {
			d.fail("share group %q config %+v", g, c)
		}
	}
	return g, c
}

func encodeOffsets(e *enc, offsets map[TopicPartition]int64) {
	tps := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	sortTPs(tps)
	e.uvar(uint64(len(tps)))
	for _, tp := range tps {
		e.tp(tp)
		e.svar(offsets[tp])
	}
}

func decodeOffsets(d *dec) map[TopicPartition]int64 {
	n := d.count(3)
	m := make(map[TopicPartition]int64, n)
	for i := 0; i < n && d.err == nil; i++ {
		tp := d.tp()
		m[tp] = d.offset()
	}
	return m
}

// --- transactions ---

// txnRecord is a transactional id's full coordinator state: the last
// record of an id describes it completely. PREPARE_* and COMPLETE_*
// records carry the participants and the markers' producer id and epoch,
// so recovery can (re)send the markers; markers are idempotent.
type txnRecord struct {
	id            string
	pid           int64
	epoch         int16
	state         TxnState
	timeout       time.Duration
	started       time.Duration
	seq           int64
	timedOutEpoch int16
	markerPID     int64
	markerEpoch   int16
	parts         []TopicPartition
	shares        []shareKey
	groups        []string
}

func (r *txnRecord) encode(e *enc) {
	e.u8(recTxn)
	e.str(r.id)
	e.svar(r.pid)
	e.svar(int64(r.epoch))
	e.u8(byte(r.state))
	e.svar(int64(r.timeout))
	e.svar(int64(r.started))
	e.svar(r.seq)
	e.svar(int64(r.timedOutEpoch))
	e.svar(r.markerPID)
	e.svar(int64(r.markerEpoch))
	e.uvar(uint64(len(r.parts)))
	for _, tp := range r.parts {
		e.tp(tp)
	}
	e.uvar(uint64(len(r.shares)))
	for _, k := range r.shares {
		e.str(k.group)
		e.tp(k.tp)
	}
	e.uvar(uint64(len(r.groups)))
	for _, g := range r.groups {
		e.str(g)
	}
}

func (r *txnRecord) decode(d *dec) {
	r.id, r.pid, r.epoch = d.str(), d.svar(), d.i16()
	r.state = TxnState(d.u8())
	r.timeout, r.started = time.Duration(d.svar()), time.Duration(d.svar())
	r.seq, r.timedOutEpoch = d.svar(), d.i16()
	r.markerPID, r.markerEpoch = d.svar(), d.i16()
	n := d.count(3)
	for i := 0; i < n && d.err == nil; i++ {
		r.parts = append(r.parts, d.tp())
	}
	n = d.count(4)
	for i := 0; i < n && d.err == nil; i++ {
		r.shares = append(r.shares, shareKey{group: d.str(), tp: d.tp()})
	}
	n = d.count(1)
	for i := 0; i < n && d.err == nil; i++ {
		r.groups = append(r.groups, d.str())
	}
	if d.err == nil && (r.id == "" || r.pid < 0 || r.epoch < 0 || r.state > TxnDead || r.timeout <= 0) {
		d.fail("transaction %q pid %d epoch %d state %v timeout %v", r.id, r.pid, r.epoch, r.state, r.timeout)
	}
}

// --- partitions ---

type batchRecord struct {
	pid           int64
	epoch         int16
	baseSeq       int32
	transactional bool
	ts            int64
	keys, values  [][]byte
	headers       [][]plog.Header
}

func encodeBatch(e *enc, pid int64, epoch int16, seq int32, txn bool, ts int64, keys, values [][]byte, headers [][]plog.Header) {
	e.u8(recBatch)
	e.svar(pid)
	e.svar(int64(epoch))
	e.svar(int64(seq))
	e.boolean(txn)
	e.svar(ts)
	e.uvar(uint64(len(values)))
	e.boolean(keys != nil)
	for i, v := range values {
		if keys != nil {
			e.nbytes(keys[i])
		}
		e.nbytes(v)
	}
	// Headers follow the values, so batches written without them decode.
	if headers != nil {
		e.boolean(true)
		for _, hs := range headers {
			e.uvar(uint64(len(hs)))
			for _, h := range hs {
				e.str(h.Key)
				e.nbytes(h.Value)
			}
		}
	}
}

func (r *batchRecord) decode(d *dec) {
	r.pid, r.epoch, r.baseSeq = d.svar(), d.i16(), d.i32()
	r.transactional, r.ts = d.boolean(), d.svar()
	n := d.count(1)
	hasKeys := d.boolean()
	if d.err == nil && n == 0 {
		d.fail("empty batch")
	}
	if hasKeys {
		r.keys = make([][]byte, 0, n)
	}
	r.values = make([][]byte, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		if hasKeys {
			r.keys = append(r.keys, d.nbytes())
		}
		r.values = append(r.values, d.nbytes())
	}
	if d.err == nil && len(d.b) > 0 && d.boolean() {
		r.headers = make([][]plog.Header, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			m := d.count(2)
			var hs []plog.Header
			for k := 0; k < m && d.err == nil; k++ {
				hs = append(hs, plog.Header{Key: d.str(), Value: d.nbytes()})
			}
			r.headers = append(r.headers, hs)
		}
	}
	if d.err == nil && (r.pid < -1 || r.transactional && r.pid < 0) {
		d.fail("batch of producer %d", r.pid)
	}
}

type markerRecord struct {
	pid    int64
	epoch  int16
	commit bool
	ts     int64
}

func (r *markerRecord) encode(e *enc) {
	e.u8(recMarker)
	e.svar(r.pid)
	e.svar(int64(r.epoch))
	e.boolean(r.commit)
	e.svar(r.ts)
}

func (r *markerRecord) decode(d *dec) {
	r.pid, r.epoch, r.commit, r.ts = d.svar(), d.i16(), d.boolean(), d.svar()
	if d.err == nil && r.pid < 0 {
		d.fail("marker of producer %d", r.pid)
	}
}

// --- share state ---

// encodeRuns writes runs contiguous from their first offset (which the
// record holds), so each run costs its length and state.
func encodeRuns(e *enc, runs []sharepart.DurableRun) {
	e.uvar(uint64(len(runs)))
	for i := range runs {
		r := &runs[i]
		e.uvar(uint64(r.Last - r.First))
		encodeRunState(e, r)
	}
}

func encodeRunState(e *enc, r *sharepart.DurableRun) {
	e.u8(byte(r.State))
	e.uvar(uint64(r.Count))
	switch r.State {
	case sharepart.TxPending:
		e.svar(int64(r.Producer))
		e.svar(int64(r.Epoch))
		e.u8(byte(r.Staged))
	case sharepart.Archived:
		e.u8(byte(r.Reason))
	}
}

func decodeRunState(d *dec, r *sharepart.DurableRun) {
	r.State = sharepart.State(d.u8())
	r.Count = int(min(d.uvar(), 1<<20))
	switch r.State {
	case sharepart.TxPending:
		r.Producer, r.Epoch, r.Staged = sharepart.ProducerID(d.svar()), d.i16(), sharepart.AckType(d.u8())
	case sharepart.Archived:
		r.Reason = sharepart.Reason(d.u8())
	}
}

func decodeRuns(d *dec, first int64, dst []sharepart.DurableRun) []sharepart.DurableRun {
	n := d.count(3)
	next := first
	for i := 0; i < n && d.err == nil; i++ {
		length := d.uvar()
		if length >= 1<<62 || next+int64(length) >= 1<<62 {
			d.fail("run of %d records", length)
			break
		}
		r := sharepart.DurableRun{First: next, Last: next + int64(length)}
		decodeRunState(d, &r)
		dst = append(dst, r)
		next = r.Last + 1
	}
	return dst
}

// encodeSparseRuns writes runs that need not be contiguous (history).
func encodeSparseRuns(e *enc, runs []sharepart.DurableRun) {
	e.uvar(uint64(len(runs)))
	prev := int64(0)
	for i := range runs {
		r := &runs[i]
		e.svar(r.First - prev)
		e.uvar(uint64(r.Last - r.First))
		encodeRunState(e, r)
		prev = r.Last + 1
	}
}

func decodeSparseRuns(d *dec, dst []sharepart.DurableRun) []sharepart.DurableRun {
	n := d.count(4)
	prev := int64(0)
	for i := 0; i < n && d.err == nil; i++ {
		first := prev + d.svar()
		length := d.uvar()
		if first < 0 || first >= 1<<62 || length >= 1<<62 || first+int64(length) >= 1<<62 {
			d.fail("history run at %d of %d records", first, length)
			break
		}
		r := sharepart.DurableRun{First: first, Last: first + int64(length)}
		decodeRunState(d, &r)
		dst = append(dst, r)
		prev = r.Last + 1
	}
	return dst
}

func encodeShareKey(e *enc, typ byte, group string, tp TopicPartition) {
	e.u8(typ)
	e.str(group)
	e.tp(tp)
}

func encodeSnapshot(e *enc, group string, tp TopicPartition, s *sharepart.Snapshot) {
	encodeShareKey(e, recShareSnapshot, group, tp)
	e.svar(s.HistoryBase)
	e.svar(s.SPSO)
	encodeRuns(e, s.Runs)
}

func decodeSnapshot(d *dec, s *sharepart.Snapshot) {
	s.HistoryBase, s.SPSO = d.offset(), d.offset()
	s.Runs = decodeRuns(d, s.SPSO, s.Runs[:0])
}

func encodeDelta(e *enc, group string, tp TopicPartition, dl *sharepart.Delta) {
	encodeShareKey(e, recShareDelta, group, tp)
	e.svar(dl.SPSO)
	e.svar(dl.First)
	e.svar(dl.Last)
	encodeRuns(e, dl.Runs)
}

func decodeDelta(d *dec, dl *sharepart.Delta) {
	dl.SPSO, dl.First, dl.Last = d.offset(), d.offset(), d.svar()
	if d.err == nil && (dl.Last < -1 || dl.Last >= 1<<62) {
		d.fail("delta [%d,%d]", dl.First, dl.Last)
	}
	dl.Runs = decodeRuns(d, dl.First, dl.Runs[:0])
	dl.History = dl.History[:0]
}

func encodeHistory(e *enc, group string, tp TopicPartition, runs []sharepart.DurableRun) {
	encodeShareKey(e, recHistory, group, tp)
	encodeSparseRuns(e, runs)
}

func sortTPs(tps []TopicPartition) {
	sort.Slice(tps, func(i, j int) bool { return tpLess(tps[i], tps[j]) })
}

func sortInt64s(v []int64) { sort.Slice(v, func(i, j int) bool { return v[i] < v[j] }) }

// --- classic groups ---

func encodeClassicState(e *enc, g *classicGroup) {
	e.u8(recClassicState)
	e.str(g.id)
	e.u8(byte(g.reset))
	encodeOffsets(e, g.committed)
	pids := make([]int64, 0, len(g.pending))
	for pid := range g.pending {
		pids = append(pids, pid)
	}
	sortInt64s(pids)
	e.uvar(uint64(len(pids)))
	for _, pid := range pids {
		e.svar(pid)
		encodeOffsets(e, g.pending[pid])
	}
}

func decodeClassicState(d *dec) (id string, reset AutoOffsetReset, committed map[TopicPartition]int64, pending map[int64]map[TopicPartition]int64) {
	id = d.str()
	reset = AutoOffsetReset(d.u8())
	committed = decodeOffsets(d)
	n := d.count(2)
	pending = make(map[int64]map[TopicPartition]int64, n)
	for i := 0; i < n && d.err == nil; i++ {
		pid := d.svar()
		pending[pid] = decodeOffsets(d)
	}
	if d.err == nil && (id == "" || reset > ResetEarliest) {
		d.fail("classic group %q reset %d", id, reset)
	}
	return
}
