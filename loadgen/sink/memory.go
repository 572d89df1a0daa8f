package sink

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// LogFile is the in-process sink's log, in the directory it is durable
// under.
const LogFile = "sink.log"

type txnState uint8

const (
	statePrepared txnState = iota + 1
	stateCommitted
	stateAborted
)

type memTxn struct {
	state   txnState
	entries []Entry
}

// Memory is the in-process sink. With a directory every operation is
// appended to its log and fsynced before it returns, and OpenMemory on the
// same directory recovers it: a prepared transaction stays prepared across
// a crash of the process, as a database's does.
type Memory struct {
	mu    sync.Mutex
	txns  map[string]*memTxn
	order []string // transaction ids in first-seen order
	f     *os.File
	w     *bufio.Writer
}

// OpenMemory returns the in-process sink, durable under dir (recovered
// from its log when there is one), or in memory only when dir is "".
func OpenMemory(dir string) (*Memory, error) {
	m := &Memory{txns: map[string]*memTxn{}}
	if dir == "" {
		return m, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	path := filepath.Join(dir, LogFile)
	if err := m.replay(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	m.f, m.w = f, bufio.NewWriter(f)
	return m, nil
}

// replay rebuilds the state from the log. A last record cut short by a
// crash (no end line) is dropped: its operation never returned.
func (m *Memory) replay(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var (
		cur     string
		entries []Entry
		inPrep  bool
	)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		bad := func() error { return fmt.Errorf("sink: %s line %d: malformed record %q", path, line, sc.Text()) }
		switch fields[0] {
		case "P":
			if len(fields) != 2 {
				return bad()
			}
			cur, entries, inPrep = fields[1], nil, true
		case "E":
			if !inPrep || len(fields) != 4 {
				return bad()
			}
			id, e1 := strconv.ParseUint(fields[1], 10, 64)
			w, e2 := strconv.ParseUint(fields[2], 10, 16)
			at, e3 := strconv.ParseInt(fields[3], 10, 64)
			if e1 != nil || e2 != nil || e3 != nil {
				return bad()
			}
			entries = append(entries, Entry{InputID: id, Worker: uint16(w), IntendedNs: at})
		case "Z": // end of a prepare record
			if !inPrep || len(fields) != 2 || fields[1] != cur {
				return bad()
			}
			m.applyPrepare(cur, entries)
			inPrep = false
		case "C", "A":
			if len(fields) != 2 {
				return bad()
			}
			if t := m.txns[fields[1]]; t != nil {
				t.state = stateCommitted
				if fields[0] == "A" {
					t.state, t.entries = stateAborted, nil
				}
			}
		default:
			return bad()
		}
	}
	return sc.Err()
}

func (m *Memory) applyPrepare(txn string, entries []Entry) {
	if _, ok := m.txns[txn]; !ok {
		m.order = append(m.order, txn)
	}
	m.txns[txn] = &memTxn{state: statePrepared, entries: entries}
}

// logLocked appends lines and makes them durable.
func (m *Memory) logLocked(write func(w *bufio.Writer)) error {
	if m.f == nil {
		return nil
	}
	write(m.w)
	if err := m.w.Flush(); err != nil {
		return fmt.Errorf("sink: writing the log: %w", err)
	}
	if err := m.f.Sync(); err != nil {
		return fmt.Errorf("sink: syncing the log: %w", err)
	}
	return nil
}

func (m *Memory) Name() string {
	if m.f != nil {
		return "memory (durable: " + filepath.Dir(m.f.Name()) + ")"
	}
	return "memory"
}

func (m *Memory) PreCommit(_ context.Context, txn string, entries []Entry) error {
	if err := ValidTxn(txn); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.txns[txn]; t != nil {
		return fmt.Errorf("sink: transaction %q already exists", txn)
	}
	err := m.logLocked(func(w *bufio.Writer) {
		fmt.Fprintf(w, "P %s\n", txn)
		for _, e := range entries {
			fmt.Fprintf(w, "E %d %d %d\n", e.InputID, e.Worker, e.IntendedNs)
		}
		fmt.Fprintf(w, "Z %s\n", txn)
	})
	if err != nil {
		return err
	}
	m.applyPrepare(txn, append([]Entry(nil), entries...))
	return nil
}

func (m *Memory) Commit(_ context.Context, txn string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.txns[txn]
	switch {
	case t == nil || t.state == stateAborted:
		return fmt.Errorf("%w: %q", ErrNotPrepared, txn)
	case t.state == stateCommitted:
		return nil
	}
	if err := m.logLocked(func(w *bufio.Writer) { fmt.Fprintf(w, "C %s\n", txn) }); err != nil {
		return err
	}
	t.state = stateCommitted
	return nil
}

func (m *Memory) Abort(_ context.Context, txn string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.txns[txn]
	switch {
	case t == nil || t.state == stateAborted:
		return nil
	case t.state == stateCommitted:
		return fmt.Errorf("%w: %q", ErrCommitted, txn)
	}
	if err := m.logLocked(func(w *bufio.Writer) { fmt.Fprintf(w, "A %s\n", txn) }); err != nil {
		return err
	}
	t.state, t.entries = stateAborted, nil
	return nil
}

func (m *Memory) Prepared(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, id := range m.order {
		if strings.HasPrefix(id, prefix) && m.txns[id].state == statePrepared {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (m *Memory) Read(_ context.Context, prefix string) (Contents, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c Contents
	for _, id := range m.order {
		if !strings.HasPrefix(id, prefix) {
			continue
		}
		t := m.txns[id]
		switch t.state {
		case statePrepared:
			c.Prepared = append(c.Prepared, id)
		case stateAborted:
			c.Aborted = append(c.Aborted, id)
		case stateCommitted:
			for _, e := range t.entries {
				c.Committed = append(c.Committed, Row{Txn: id, Entry: e})
			}
		}
	}
	return c, nil
}

func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.f == nil {
		return nil
	}
	err := errors.Join(m.w.Flush(), m.f.Close())
	m.f = nil
	return err
}
