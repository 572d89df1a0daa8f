package sink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
)

// PostgresURLEnv names the environment variable with the URL of a
// PostgreSQL server for the tests (scripts/postgres/up prints one); .ci/run
// sets it, and then a server that cannot be reached fails the tests.
const PostgresURLEnv = "SHAREBENCH_POSTGRES_URL"

// sinks returns every sink the tests run against: the in-process one, in
// memory and durable, and PostgreSQL when PostgresURLEnv is set.
func sinks(t *testing.T) map[string]func(t *testing.T) Sink {
	out := map[string]func(t *testing.T) Sink{
		"memory": func(t *testing.T) Sink { s, _ := OpenMemory(""); return s },
		"memory-durable": func(t *testing.T) Sink {
			s, err := OpenMemory(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	if url := os.Getenv(PostgresURLEnv); url != "" {
		out["postgres"] = func(t *testing.T) Sink {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := OpenPostgres(ctx, url)
			if err != nil {
				t.Fatalf("%s=%s: %v", PostgresURLEnv, url, err)
			}
			return s
		}
	}
	return out
}

// TestTwoPhase drives each sink through every transition and reads it back.
func TestTwoPhase(t *testing.T) {
	for name, open := range sinks(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			defer s.Close()
			prefix := fmt.Sprintf("test-%d-", time.Now().UnixNano())
			a, b, c := prefix+"a", prefix+"b", prefix+"c"
			for i, txn := range []string{a, b, c} {
				if err := s.PreCommit(ctx, txn, []Entry{{InputID: uint64(10*i + 1), Worker: 1, IntendedNs: 5}, {InputID: uint64(10*i + 2), Worker: 1}}); err != nil {
					t.Fatalf("pre-commit %s: %v", txn, err)
				}
			}
			got, err := s.Read(ctx, prefix)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Committed) != 0 || !slices.Equal(got.Prepared, []string{a, b, c}) {
				t.Fatalf("after pre-commits: %+v, want nothing committed and a, b, c prepared", got)
			}
			if err := s.Commit(ctx, a); err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, a); err != nil {
				t.Errorf("committing a committed transaction again: %v, want success", err)
			}
			if err := s.Abort(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := s.Abort(ctx, b); err != nil {
				t.Errorf("aborting an aborted transaction again: %v, want success", err)
			}
			if err := s.Commit(ctx, b); !errors.Is(err, ErrNotPrepared) {
				t.Errorf("committing an aborted transaction: %v, want ErrNotPrepared", err)
			}
			if err := s.Abort(ctx, a); !errors.Is(err, ErrCommitted) {
				t.Errorf("aborting a committed transaction: %v, want ErrCommitted", err)
			}
			if err := s.Commit(ctx, prefix+"never"); !errors.Is(err, ErrNotPrepared) {
				t.Errorf("committing an unknown transaction: %v, want ErrNotPrepared", err)
			}
			prep, err := s.Prepared(ctx, prefix)
			if err != nil || !slices.Equal(prep, []string{c}) {
				t.Fatalf("Prepared = %v, %v; want [c]", prep, err)
			}
			got, err = s.Read(ctx, prefix)
			if err != nil {
				t.Fatal(err)
			}
			var ids []uint64
			for _, r := range got.Committed {
				if r.Txn != a {
					t.Errorf("committed row of %s, want only %s", r.Txn, a)
				}
				ids = append(ids, r.InputID)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, []uint64{1, 2}) || !slices.Equal(got.Aborted, []string{b}) || !slices.Equal(got.Prepared, []string{c}) {
				t.Fatalf("read back %+v: want a's entries 1, 2 committed, b aborted, c prepared", got)
			}
			if err := s.Abort(ctx, c); err != nil {
				t.Fatal(err)
			}
			if prep, _ := s.Prepared(ctx, prefix); len(prep) != 0 {
				t.Errorf("prepared after resolving all: %v", prep)
			}
		})
	}
}

// TestMemoryRecovers: a prepared transaction of the durable in-process
// sink survives closing it (a crash of its process), and a record cut short
// by a crash is dropped.
func TestMemoryRecovers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.PreCommit(ctx, "x-1", []Entry{{InputID: 7}})
	_ = s.PreCommit(ctx, "x-2", []Entry{{InputID: 8}})
	_ = s.Commit(ctx, "x-2")
	s.Close()
	f, _ := os.OpenFile(dir+"/"+LogFile, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, "P x-3\nE 9 0 0\n") // no end line: the pre-commit never returned
	f.Close()
	s, err = OpenMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prep, _ := s.Prepared(ctx, "x-")
	if !slices.Equal(prep, []string{"x-1"}) {
		t.Fatalf("prepared after reopening: %v, want [x-1]", prep)
	}
	if err := s.Commit(ctx, "x-1"); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Read(ctx, "x-")
	if len(got.Committed) != 2 {
		t.Fatalf("committed after recovery: %+v, want entries 7 and 8", got.Committed)
	}
}

// TestOpenRejects: a sink URL that names nothing, and a bad transaction id,
// fail with errors naming them.
func TestOpenRejects(t *testing.T) {
	if _, err := Open(context.Background(), "mysql://x", ""); err == nil {
		t.Error("Open(mysql://x) succeeded")
	}
	s, _ := OpenMemory("")
	if err := s.PreCommit(context.Background(), "bad id'", nil); err == nil {
		t.Error("a transaction id with a quote was accepted")
	}
}
