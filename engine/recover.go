// This file holds recovery: checking the data directory, replaying every
// log into fresh pure objects (partition logs, share partitions,
// transaction states, groups), installing them in the shards, and
// completing the transactions that had decided.

package engine

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sharebench/sharebench/engine/internal/plog"
	"github.com/sharebench/sharebench/engine/internal/sharepart"
	"github.com/sharebench/sharebench/engine/internal/txncoord"
	"github.com/sharebench/sharebench/engine/internal/wal"
)

// dataDirMarker names the file that makes a directory a sharebench data
// directory; dataFormat is the format version this build writes and the
// newest it reads.
const (
	dataDirMarker = "SHAREBENCH"
	dataFormat    = 1
)

// checkDataDir creates the data directory and its marker when the
// directory is new or empty, and refuses a directory that is not a
// sharebench data directory or was written by a newer format.
func checkDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotDataDir, dir, err)
	}
	path := filepath.Join(dir, dataDirMarker)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNotDataDir, dir, err)
		}
		if len(ents) > 0 {
			return fmt.Errorf("%w: %s holds files but no %s marker; pass an empty directory or one sharebench created", ErrNotDataDir, dir, dataDirMarker)
		}
		body := fmt.Sprintf("sharebench data directory\nformat %d\n", dataFormat)
		if err := writeFileSync(path, []byte(body)); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNotDataDir, dir, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotDataDir, dir, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var lines []string
	for sc.Scan() && len(lines) < 2 {
		lines = append(lines, sc.Text())
	}
	if len(lines) < 2 || lines[0] != "sharebench data directory" || !strings.HasPrefix(lines[1], "format ") {
		return fmt.Errorf("%w: %s is not a sharebench data directory marker", ErrNotDataDir, path)
	}
	v, err := strconv.Atoi(strings.TrimPrefix(lines[1], "format "))
	switch {
	case err != nil || v < 1:
		return fmt.Errorf("%w: %s: unreadable format %q", ErrNotDataDir, path, lines[1])
	case v > dataFormat:
		return fmt.Errorf("%w: %s was written by format %d; this build reads up to format %d: use a newer sharebench or another directory", ErrDataDirVersion, dir, v, dataFormat)
	}
	return nil
}

func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// replayState is what replay builds before it is installed.
type replayState struct {
	e        *Engine
	topics   map[string]*topicRecord
	byID     map[uint64]*topicRecord
	shareCfg map[string]GroupConfig
	classic  map[string]*classicGroup
	txns     map[string]*txnRecord
	parts    map[TopicPartition]*partition
	shares   map[shareKey]*sharepart.SharePartition
	sj       map[shareKey]*shareJournal
	history  map[shareKey][]sharepart.DurableRun
	maxPID   int64
	records  int64
	// deleted holds the directory ids of deleted topics; maxTopicID is the
	// largest directory id any topic had, deleted ones included, so no id
	// is used twice.
	deleted    map[uint64]bool
	maxTopicID uint64
	// deletedGroups holds the ids of groups a DeleteGroup removed (they
	// may have been created again since); orphans holds share keys whose
	// state outlived its topic or group because a crash cut the
	// deletion's flush short: recovery journals their drops.
	deletedGroups map[string]bool
	orphans       map[shareKey]bool
	// deletedNames holds the names of deleted topics not created again:
	// classic offsets of them are what a cut deletion left behind.
	deletedNames map[string]bool
	// only restricts share and history replay to one share partition,
	// restored with spCfg (a share-partition failover).
	only  *shareKey
	spCfg sharepart.Config
}

func newReplayState(e *Engine) *replayState {
	return &replayState{
		e: e, topics: map[string]*topicRecord{}, byID: map[uint64]*topicRecord{},
		shareCfg: map[string]GroupConfig{}, classic: map[string]*classicGroup{}, txns: map[string]*txnRecord{},
		parts: map[TopicPartition]*partition{}, shares: map[shareKey]*sharepart.SharePartition{},
		sj: map[shareKey]*shareJournal{}, history: map[shareKey][]sharepart.DurableRun{},
		deleted: map[uint64]bool{}, deletedGroups: map[string]bool{}, orphans: map[shareKey]bool{}, deletedNames: map[string]bool{},
	}
}

func unknownRecord(typ byte) error {
	return fmt.Errorf("%w: record type %d in this log", errBadRecord, typ)
}

func (rs *replayState) applyMeta(_ uint64, d *dec) error {
	switch typ := d.u8(); typ {
	case recTopic, recTopicCreate:
		var r topicRecord
		r.decode(d, typ)
		if err := d.end(); err != nil {
			return err
		}
		if rs.topics[r.name] != nil || rs.byID[r.id] != nil || rs.deleted[r.id] {
			return fmt.Errorf("%w: topic %q (id %d) created twice", errBadRecord, r.name, r.id)
		}
		rs.topics[r.name], rs.byID[r.id] = &r, &r
		rs.maxTopicID = max(rs.maxTopicID, r.id)
		delete(rs.deletedNames, r.name)
	case recTopicDelete:
		id := d.uvar()
		if err := d.end(); err != nil {
			return err
		}
		r := rs.byID[id]
		if r == nil {
			return fmt.Errorf("%w: deletion of topic id %d, which no live topic has", errBadRecord, id)
		}
		delete(rs.topics, r.name)
		delete(rs.byID, id)
		rs.deleted[id] = true
		rs.deletedNames[r.name] = true
	case recTopicPartitions:
		id, n := d.uvar(), d.i32()
		if err := d.end(); err != nil {
			return err
		}
		r := rs.byID[id]
		if r == nil || n <= r.partitions || n > 1<<20 {
			return fmt.Errorf("%w: partition count %d for topic id %d", errBadRecord, n, id)
		}
		r.partitions = n
	case recTopicConfigs:
		id := d.uvar()
		configs := decodeTopicConfigs(d)
		if err := d.end(); err != nil {
			return err
		}
		r := rs.byID[id]
		if r == nil {
			return fmt.Errorf("%w: configs of topic id %d, which no live topic has", errBadRecord, id)
		}
		r.configs = configs
	default:
		return unknownRecord(typ)
	}
	return nil
}

func (rs *replayState) classicGroup(id string) (*classicGroup, error) {
	g := rs.classic[id]
	if g == nil {
		return nil, fmt.Errorf("%w: offsets of unknown classic group %q", errBadRecord, id)
	}
	return g, nil
}

func (rs *replayState) applyGroups(_ uint64, d *dec) error {
	switch typ := d.u8(); typ {
	case recShareGroup:
		g, cfg := decodeShareGroup(d)
		if err := d.end(); err != nil {
			return err
		}
		rs.shareCfg[g] = cfg
	case recClassicState:
		id, reset, committed, pending := decodeClassicState(d)
		if err := d.end(); err != nil {
			return err
		}
		rs.classic[id] = &classicGroup{id: id, reset: reset, members: map[string]*classicMemberState{}, committed: committed, pending: pending}
	case recPendingOffset:
		id, pid, offsets := d.str(), d.svar(), decodeOffsets(d)
		if err := d.end(); err != nil {
			return err
		}
		g, err := rs.classicGroup(id)
		if err != nil {
			return err
		}
		p := g.pending[pid]
		if p == nil {
			p = map[TopicPartition]int64{}
			g.pending[pid] = p
		}
		for tp, off := range offsets {
			p[tp] = off
		}
	case recOffsetMarker:
		id, pid, commit := d.str(), d.svar(), d.boolean()
		if err := d.end(); err != nil {
			return err
		}
		g, err := rs.classicGroup(id)
		if err != nil {
			return err
		}
		applyOffsetMarker(g, pid, commit)
	case recGroupDelete:
		id := d.str()
		if err := d.end(); err != nil {
			return err
		}
		delete(rs.shareCfg, id)
		delete(rs.classic, id)
		rs.deletedGroups[id] = true
	default:
		return unknownRecord(typ)
	}
	return nil
}

func (rs *replayState) applyTxn(_ uint64, d *dec) error {
	if typ := d.u8(); typ != recTxn {
		return unknownRecord(typ)
	}
	r := &txnRecord{}
	r.decode(d)
	if err := d.end(); err != nil {
		return err
	}
	rs.txns[r.id] = r
	rs.maxPID = max(rs.maxPID, r.pid, r.markerPID)
	return nil
}

func (rs *replayState) applyPartition(p *partition) func(uint64, *dec) error {
	return func(_ uint64, d *dec) error {
		before := p.log.HighWatermark()
		defer func() { rs.records += p.log.HighWatermark() - before }()
		switch typ := d.u8(); typ {
		case recBatch:
			var r batchRecord
			r.decode(d)
			if err := d.end(); err != nil {
				return err
			}
			b := &plog.Batch{Keys: r.keys, Values: r.values, Headers: r.headers, ProducerID: r.pid, Epoch: r.epoch, BaseSequence: r.baseSeq, Transactional: r.transactional, Timestamp: r.ts}
			_, dup, err := p.log.Append(b)
			if err == nil && dup {
				err = errors.New("a duplicate of an earlier batch")
			}
			if err != nil {
				return fmt.Errorf("%w: batch of producer %d replays with: %v", errBadRecord, r.pid, err)
			}
			rs.maxPID = max(rs.maxPID, r.pid)
		case recMarker:
			var r markerRecord
			r.decode(d)
			if err := d.end(); err != nil {
				return err
			}
			if _, err := p.log.Marker(r.pid, r.epoch, r.commit, r.ts); err != nil {
				return fmt.Errorf("%w: marker of producer %d replays with: %v", errBadRecord, r.pid, err)
			}
			rs.maxPID = max(rs.maxPID, r.pid)
		case recLogStart:
			off := d.offset()
			if err := d.end(); err != nil {
				return err
			}
			if _, err := p.log.DeleteRecords(off); err != nil {
				return fmt.Errorf("%w: log start %d: %v", errBadRecord, off, err)
			}
		default:
			return unknownRecord(typ)
		}
		return nil
	}
}

// errSkip: a record of another share partition than the one reloaded.
var errSkip = errors.New("skip")

func (rs *replayState) shareKey(d *dec) (shareKey, *partition, error) {
	k := shareKey{group: d.str(), tp: d.tp()}
	if d.err != nil {
		return k, nil, d.err
	}
	if rs.only != nil && k != *rs.only {
		return k, nil, errSkip
	}
	p := rs.parts[k.tp]
	if p == nil {
		// The topic was deleted, or its creation was lost with a torn tail
		// of the metadata log: its share state goes with it. (A topic whose
		// partition log holds records cannot get here: lostTopics refuses
		// that directory.)
		rs.orphans[k] = true
		return k, nil, errSkip
	}
	if k.group == "" || rs.classic[k.group] != nil && !rs.deletedGroups[k.group] {
		return k, nil, fmt.Errorf("%w: share state of group %q, which is not a share group", errBadRecord, k.group)
	}
	if rs.classic[k.group] != nil {
		// A share group deleted and created again as a classic group.
		rs.orphans[k] = true
		return k, nil, errSkip
	}
	return k, p, nil
}

func (rs *replayState) spConfig(group string) sharepart.Config {
	if rs.only != nil {
		return rs.spCfg
	}
	cfg, ok := rs.shareCfg[group]
	if !ok {
		cfg = rs.e.cfg.group
	}
	return rs.e.spConfig(cfg)
}

func (rs *replayState) applyShare(seg uint64, d *dec) error {
	typ := d.u8()
	if typ == recShareDrop {
		k := shareKey{group: d.str(), tp: d.tp()}
		if err := d.end(); err != nil {
			return err
		}
		if rs.only == nil || k == *rs.only {
			delete(rs.shares, k)
			delete(rs.sj, k)
			delete(rs.orphans, k)
		}
		return nil
	}
	k, _, err := rs.shareKey(d)
	if err == errSkip {
		return nil
	}
	if err != nil {
		return err
	}
	sj := rs.sj[k]
	if sj == nil {
		sj = &shareJournal{}
	}
	switch typ {
	case recShareSnapshot:
		decodeSnapshot(d, &sj.s)
		if err := d.end(); err != nil {
			return err
		}
		sp, err := sharepart.Restore(rs.spConfig(k.group), &sj.s)
		if err != nil {
			return fmt.Errorf("%w: %s of %q: %v", errBadRecord, k.tp, k.group, err)
		}
		rs.shares[k], rs.sj[k] = sp, sj
		sj.snapSeg, sj.deltas = seg, 0
	case recShareDelta:
		decodeDelta(d, &sj.d)
		if err := d.end(); err != nil {
			return err
		}
		sp := rs.shares[k]
		if sp == nil {
			return fmt.Errorf("%w: share-state delta of %s for %q before any snapshot", errBadRecord, k.tp, k.group)
		}
		if err := sp.ApplyDelta(&sj.d); err != nil {
			return fmt.Errorf("%w: %s of %q: %v", errBadRecord, k.tp, k.group, err)
		}
		sj.deltas++
	default:
		return unknownRecord(typ)
	}
	return nil
}

func (rs *replayState) applyHistory(_ uint64, d *dec) error {
	typ := d.u8()
	if typ != recHistory && typ != recHistoryDrop {
		return unknownRecord(typ)
	}
	k := shareKey{group: d.str(), tp: d.tp()}
	if rs.only != nil && k != *rs.only {
		return nil
	}
	if typ == recHistoryDrop {
		delete(rs.history, k)
		return d.end()
	}
	runs := decodeSparseRuns(d, nil)
	if err := d.end(); err != nil {
		return err
	}
	rs.history[k] = append(rs.history[k], runs...)
	return nil
}

// logError turns a replay failure into the engine's error: corruption
// names the file and the offset; a newer segment format is refused.
func logError(err error) error {
	var ce *wal.CorruptError
	switch {
	case errors.Is(err, wal.ErrVersion):
		return fmt.Errorf("%w: %w", ErrDataDirVersion, err)
	case errors.As(err, &ce), errors.Is(err, errBadRecord), errors.Is(err, wal.ErrNotSegment):
		return fmt.Errorf("%w: %w", ErrCorruptLog, err)
	}
	return err
}

// recover opens the data directory, replays it and installs the result.
// The engine is crashed (the gate closed) and no call is in flight.
func (e *Engine) recover() (RecoveryReport, error) {
	t0 := time.Now()
	d := e.dur
	rep := RecoveryReport{Dir: d.dir}
	if err := checkDataDir(d.dir); err != nil {
		return rep, err
	}
	g, err := wal.NewGroup(e.cfg.flush.walOptions(e.cfg.segmentBytes))
	if err != nil {
		return rep, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	j := &journal{dir: d.dir, g: g, snapshotEvery: e.cfg.snapshotEvery,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			g.Crash()
		}
	}()
	replay := func(l *wal.Log, fn func(uint64, *dec) error) error {
		st, err := l.Replay(func(seg uint64, payload []byte) error { return fn(seg, &dec{b: payload}) })
		rep.Frames += st.Frames
		rep.Bytes += st.Bytes
		rep.Segments += st.Segments
		for _, t := range st.Truncated {
			rep.Truncated = append(rep.Truncated, Truncation{File: t.File, Offset: t.Offset, Bytes: t.Bytes, Cause: t.Cause})
		}
		return logError(err)
	}
	open := func(name string, prio int) (*wal.Log, error) {
		l, err := g.Open(filepath.Join(d.dir, name), prio)
		return l, logError(err)
	}
	rs := newReplayState(e)
	var l *wal.Log
	if l, err = open("meta", prioMeta); err == nil {
		j.meta = l
		err = replay(l, rs.applyMeta)
	}
	if err == nil {
		if l, err = open("groups", prioGroups); err == nil {
			j.groups = l
			err = replay(l, rs.applyGroups)
		}
	}
	if err == nil {
		if l, err = open("txn", prioTxn); err == nil {
			j.txn = l
			err = replay(l, rs.applyTxn)
		}
	}
	if err != nil {
		return rep, err
	}
	if err := lostTopics(d.dir, rs, rep.Truncated); err != nil {
		return rep, err
	}
	ids := make([]uint64, 0, len(rs.byID))
	for id := range rs.byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	for _, id := range ids {
		tr := rs.byID[id]
		for part := int32(0); part < tr.partitions; part++ {
			tp := TopicPartition{tr.name, part}
			l, err := open(filepath.Join("partitions", filepath.Base(partitionDir(d.dir, id, part))), prioPartition)
			if err != nil {
				return rep, err
			}
			p := newPartition(tp, nil, l)
			rs.parts[tp] = p
			if err := replay(l, func(seg uint64, dd *dec) error {
				if p.log == nil {
					p.log = plog.NewAt(e.cfg.retentionBytes, int64(l.FirstBase(0)))
				}
				return rs.applyPartition(p)(seg, dd)
			}); err != nil {
				return rep, err
			}
			if p.log == nil {
				p.log = plog.NewAt(e.cfg.retentionBytes, int64(l.FirstBase(0)))
			}
		}
		rep.Partitions += int(tr.partitions)
	}
	if l, err = open("history", prioHistory); err == nil {
		j.history = l
		err = replay(l, rs.applyHistory)
	}
	if err == nil {
		if l, err = open("share", prioShare); err == nil {
			j.share = l
			err = replay(l, rs.applyShare)
		}
	}
	if err != nil {
		return rep, err
	}
	for k := range rs.history {
		if rs.parts[k.tp] == nil || rs.shares[k] == nil && rs.deletedGroups[k.group] {
			rs.orphans[k] = true
		}
	}
	for k := range rs.shares {
		if rs.deletedGroups[k.group] {
			if _, ok := rs.shareCfg[k.group]; !ok {
				// The group's deletion is durable, its drops are not.
				delete(rs.shares, k)
				rs.orphans[k] = true
			}
		}
	}
	for k, sp := range rs.shares {
		if err := sp.PutHistory(rs.history[k]); err != nil {
			return rep, fmt.Errorf("%w: history of %s for %q: %v", ErrCorruptLog, k.tp, k.group, err)
		}
		p := rs.parts[k.tp]
		p.shares[k.group] = sp
		p.groups = append(p.groups, k.group)
		p.dlq = p.dlq || sp.Config().DeadLetterTopic != ""
		p.sj[k.group] = rs.sj[k]
	}
	rep.Topics, rep.SharePartitions, rep.Transactions, rep.Records = len(rs.topics), len(rs.shares), len(rs.txns), rs.records

	e.install(rs, j)
	ok = true

	// Bring the restored state forward: share partitions past their log
	// start, and every transaction that had decided completed. The
	// records this writes go to the new journal.
	now := e.clock.Now()
	var op syncPoint
	orphans := make([]shareKey, 0, len(rs.orphans))
	for k := range rs.orphans {
		orphans = append(orphans, k)
	}
	sort.Slice(orphans, func(a, b int) bool {
		if orphans[a].group != orphans[b].group {
			return orphans[a].group < orphans[b].group
		}
		return tpLess(orphans[a].tp, orphans[b].tp)
	})
	for _, k := range orphans {
		e.jShareDrop(&op, k.group, k.tp)
	}
	if len(rs.deletedNames) > 0 {
		// A crash that cut a deletion after its topic record left the
		// classic groups' offsets of the topic.
		e.forgetClassicOffsets(&op, func(tp TopicPartition) bool { return rs.deletedNames[tp.Topic] })
	}
	for tp := range rs.parts {
		_ = e.withPartitionOp(tp, &op, func(p *partition) error {
			for _, g := range p.groups {
				sp := p.shares[g]
				// A torn tail of the partition log took records the share
				// state still describes: they are gone, and a snapshot
				// records that (a delta cannot move SPSO back).
				if sp.TruncateTo(p.log.HighWatermark()) {
					e.jSnapshotLocked(j, &op, p, g, sp, p.sj[g])
				}
				sp.AdvanceLogStart(p.log.StartOffset())
			}
			return nil
		})
	}
	names := make([]string, 0, len(rs.txns))
	for id := range rs.txns {
		names = append(names, id)
	}
	sort.Strings(names)
	for _, id := range names {
		ts := e.txnShard(id)
		ts.mu.Lock()
		err := e.resolveTxnLocked(&op, ts.mu.txns[id], rs.txns[id], now, &rep)
		ts.mu.Unlock()
		if err != nil {
			return rep, err
		}
	}
	if err := e.waitLocked(&op); err != nil {
		return rep, err
	}
	go e.compactor(j)
	rep.Duration = time.Since(t0)
	return rep, nil
}

// lostTopics refuses a data directory whose meta log no longer holds a
// topic that a partition log holds records of. A topic record is durable
// before any record of its partitions is written (CreateTopic returns only
// once it is, and the meta log flushes first), so such a meta log was cut
// below a point it had synced: not a torn tail a crash leaves, which
// recovery repairs, but lost data, and recovering would drop the topic with
// every record in it (committed outputs included) without a word. A
// partition directory that holds no record is the orphan of a creation
// that never became durable, which CreateTopic clears when it reuses the
// id; it is left alone.
func lostTopics(dir string, rs *replayState, truncated []Truncation) error {
	ents, err := os.ReadDir(filepath.Join(dir, "partitions"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorruptLog, err)
	}
	var lost []string
	for _, ent := range ents {
		var id uint64
		var part int32
		if _, err := fmt.Sscanf(ent.Name(), "%d-%d", &id, &part); err != nil || !ent.IsDir() {
			continue
		}
		if tr := rs.byID[id]; tr != nil && part < tr.partitions {
			continue
		}
		rel := filepath.Join("partitions", ent.Name())
		if rs.deleted[id] {
			// A deleted topic's partition, whose removal a crash cut
			// short: the deletion is durable, so its records go.
			if err := os.RemoveAll(filepath.Join(dir, rel)); err != nil {
				return fmt.Errorf("%w: removing %s of a deleted topic: %v", ErrCorruptLog, rel, err)
			}
			continue
		}
		n, err := wal.Records(filepath.Join(dir, rel))
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrCorruptLog, rel, err)
		}
		if n > 0 {
			lost = append(lost, fmt.Sprintf("%s (%d batches or markers, topic id %d partition %d)", rel, n, id, part))
		}
	}
	if len(lost) == 0 {
		return nil
	}
	cut := "the meta log has no torn tail"
	for _, t := range truncated {
		if filepath.Base(filepath.Dir(t.File)) == "meta" {
			cut = fmt.Sprintf("recovery cut %d bytes off %s at offset %d (%s)", t.Bytes, t.File, t.Offset, t.Cause)
		}
	}
	return fmt.Errorf("%w: %s holds no topic for %s: a topic is durable before any record of it is written, so the meta log lost records it had synced (%s); the directory is refused rather than recovered without those topics and their records: restore it from a copy",
		ErrCorruptLog, filepath.Join(dir, "meta"), strings.Join(lost, ", "), cut)
}

// txnStateOf is the coordinator state a transaction record describes.
func txnStateOf(r *txnRecord, now time.Duration) *txnState {
	t := &txnState{Txn: txncoord.Txn[TopicPartition, shareKey]{ID: r.id, PID: r.pid, Epoch: r.epoch, State: r.state,
		Timeout: r.timeout, Started: min(r.started, now), Seq: r.seq, TimedOutEpoch: r.timedOutEpoch}}
	if r.state == TxnOngoing {
		t.Parts, t.Shares, t.Groups = r.parts, r.shares, r.groups
	}
	return t
}

// resolveTxnLocked brings a reloaded transaction forward (docs/design.md §3.5): one
// found in PREPARE_COMMIT completes as a commit, PREPARE_ABORT as an
// abort; a completed one has its markers sent again (they are idempotent,
// and a crash may have cut the flush between the completion and the
// markers); an ONGOING one waits for its producer or its timeout. The
// transaction's shard lock is held.
func (e *Engine) resolveTxnLocked(op *syncPoint, t *txnState, r *txnRecord, now time.Duration, rep *RecoveryReport) error {
	switch r.state {
	case TxnPrepareCommit, TxnPrepareAbort:
		t.Parts, t.Shares, t.Groups = r.parts, r.shares, r.groups
		rep.Completed++
		return e.finishTxnLocked(op, t, r.state == TxnPrepareCommit, r.markerPID, r.markerEpoch, now, nil)
	case TxnCompleteCommit, TxnCompleteAbort:
		if r.markerPID < 0 || len(r.parts)+len(r.shares)+len(r.groups) == 0 {
			return nil
		}
		t.Parts, t.Shares, t.Groups = r.parts, r.shares, r.groups
		_, err := e.sendMarkersLocked(op, t, r.state == TxnCompleteCommit, r.markerPID, r.markerEpoch, now, nil)
		t.Parts, t.Shares, t.Groups = nil, nil, nil
		return err
	case TxnOngoing:
		rep.Ongoing++
	}
	return nil
}

// install replaces the engine's state with the replayed one, one lock at a
// time. The gate is closed and nothing is in flight.
func (e *Engine) install(rs *replayState, j *journal) {
	d := e.dur
	if old := d.j.Load(); old != nil {
		st := old.g.Stats()
		d.statsMu.Lock()
		d.base.Appends += st.Appends.Load()
		d.base.AppendedBytes += st.AppendedBytes.Load()
		d.base.Writes += st.Writes.Load()
		d.base.BytesWritten += st.BytesWritten.Load()
		d.base.Fsyncs += st.Fsyncs.Load()
		d.base.Flushes += st.Flushes.Load()
		d.base.SegmentsCreated += st.SegmentsCreated.Load()
		d.base.SegmentsDeleted += st.SegmentsDeleted.Load()
		d.statsMu.Unlock()
	}
	d.j.Store(j)
	topics := make(map[string]*topic, len(rs.topics))
	ids := make(map[TopicID]*topic, len(rs.topics))
	for name, r := range rs.topics {
		t := newTopic(name, r.partitions, r.id, r.uuid)
		if r.configs != nil {
			t.configs = r.configs
		}
		topics[name], ids[r.uuid] = t, t
	}
	d.nextTopicID.Store(rs.maxTopicID + 1)
	e.topicsMu.Lock()
	old := e.topics
	e.topics, e.topicIDs = topics, ids
	e.topicsMu.Unlock()
	for _, t := range old {
		t.changed() // wake waiters on the old state
	}
	parts := make([]map[TopicPartition]*partition, len(e.data))
	for i := range parts {
		parts[i] = map[TopicPartition]*partition{}
	}
	for tp, p := range rs.parts {
		sort.Strings(p.groups)
		p.hw = p.log.HighWatermark() // everything replayed is durable
		parts[e.hash(tp.Topic, tp.Partition)%uint64(len(e.data))][tp] = p
	}
	for i := range e.data {
		ds := &e.data[i]
		ds.mu.Lock()
		for _, p := range ds.mu.parts {
			for _, sp := range p.shares {
				d.keepCounters(Counters(sp.Counters()))
			}
		}
		ds.mu.parts = parts[i]
		ds.mu.Unlock()
	}
	share := make([]map[string]*shareGroup, len(e.groups))
	classic := make([]map[string]*classicGroup, len(e.groups))
	for i := range share {
		share[i], classic[i] = map[string]*shareGroup{}, map[string]*classicGroup{}
	}
	shareGroupOf := func(id string, cfg GroupConfig) {
		i := e.hash(id, -1) % uint64(len(e.groups))
		if share[i][id] == nil {
			share[i][id] = &shareGroup{id: id, cfg: cfg, members: map[string]*shareMemberState{}, owners: map[sharepart.Owner]string{}}
		}
	}
	for id, cfg := range rs.shareCfg {
		if rs.classic[id] == nil {
			shareGroupOf(id, cfg)
		}
	}
	for k := range rs.shares {
		shareGroupOf(k.group, e.cfg.group)
	}
	for id, g := range rs.classic {
		classic[e.hash(id, -1)%uint64(len(e.groups))][id] = g
	}
	for i := range e.groups {
		gs := &e.groups[i]
		gs.mu.Lock()
		gs.mu.share, gs.mu.classic = share[i], classic[i]
		gs.mu.Unlock()
	}
	now := e.clock.Now()
	txns := make([]map[string]*txnState, len(e.txns))
	for i := range txns {
		txns[i] = map[string]*txnState{}
	}
	for id, r := range rs.txns {
		txns[e.hash(id, -2)%uint64(len(e.txns))][id] = txnStateOf(r, now)
	}
	for i := range e.txns {
		ts := &e.txns[i]
		ts.mu.Lock()
		ts.mu.txns = txns[i]
		ts.mu.Unlock()
	}
	for {
		cur := e.nextPID.Load()
		if cur >= rs.maxPID || e.nextPID.CompareAndSwap(cur, rs.maxPID) {
			break
		}
	}
}
