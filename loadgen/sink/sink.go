// Package sink is the external two-phase sink of the checkpoint model: the
// system a stream-processing framework writes its results to, outside
// Kafka, in transactions keyed by checkpoint. A transaction is
// pre-committed (prepared) at a checkpoint barrier, then committed when the
// checkpoint completes, or aborted (rolled back) when it fails; a restarted
// task lists what is still prepared to recover it. The verifier reads the
// sink back: what it holds committed is what a reader of the external
// system sees.
//
// Two implementations: an in-process sink, durable under a directory when
// given one (Open with ""), and PostgreSQL with PREPARE TRANSACTION /
// COMMIT PREPARED / ROLLBACK PREPARED (Open with a postgres:// URL).
//
// The package is a leaf: it imports nothing of sharebench.
package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Entry is one result written to the sink: the output of one input record.
type Entry struct {
	InputID uint64
	Worker  uint16
	// IntendedNs is the input's intended send time (ns since the run's
	// start), kept so end-to-end latency can be measured at commit.
	IntendedNs int64
}

// Row is one committed entry and the transaction that committed it.
type Row struct {
	Txn string
	Entry
}

// Contents is what Read finds under a prefix.
type Contents struct {
	// Committed holds every committed entry, in no particular order.
	Committed []Row
	// Prepared holds the transactions pre-committed and not yet
	// resolved, and Aborted those rolled back after a pre-commit.
	Prepared []string
	Aborted  []string
}

// Sink is a two-phase external system. Transaction ids are chosen by the
// caller, unique per run, made of letters, digits, '.', '_' and '-'.
type Sink interface {
	// PreCommit writes entries in transaction txn and prepares it: from
	// here the transaction survives a crash of the writer (and, where the
	// sink is durable, of the sink) until Commit or Abort resolves it;
	// nothing of it is visible before Commit.
	PreCommit(ctx context.Context, txn string, entries []Entry) error
	// Commit makes a prepared transaction visible. Committing one already
	// committed succeeds (a recovering task commits again what it cannot
	// know landed); one that is not prepared fails with ErrNotPrepared.
	Commit(ctx context.Context, txn string) error
	// Abort rolls a prepared transaction back. Aborting one already
	// aborted or never prepared succeeds; one already committed fails
	// with ErrCommitted.
	Abort(ctx context.Context, txn string) error
	// Prepared lists the prepared, unresolved transactions whose id starts
	// with prefix.
	Prepared(ctx context.Context, prefix string) ([]string, error)
	// Read returns everything under prefix.
	Read(ctx context.Context, prefix string) (Contents, error)
	// Name says which sink this is, for results and notes.
	Name() string
	Close() error
}

// Errors of Commit and Abort.
var (
	ErrNotPrepared = errors.New("sink: transaction not prepared")
	ErrCommitted   = errors.New("sink: transaction already committed")
)

// Open returns the sink url names: "" is the in-process sink (durable
// under dir when dir is not empty), postgres:// or postgresql:// a
// PostgreSQL database.
func Open(ctx context.Context, url, dir string) (Sink, error) {
	if err := CheckURL(url); err != nil {
		return nil, err
	}
	if isPostgres(url) {
		return OpenPostgres(ctx, url)
	}
	return OpenMemory(dir)
}

// CheckURL reports an error when url names no sink Open knows, without
// connecting to anything.
func CheckURL(url string) error {
	if url == "" || url == "memory" || isPostgres(url) {
		return nil
	}
	return fmt.Errorf("sink: unknown sink %q (valid: memory, or a postgres:// URL)", url)
}

func isPostgres(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// ValidTxn reports an error when txn is not a usable transaction id.
func ValidTxn(txn string) error {
	if txn == "" || len(txn) > 190 {
		return fmt.Errorf("sink: transaction id %q must be 1 to 190 characters", txn)
	}
	for _, c := range txn {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("sink: transaction id %q has %q (letters, digits, '.', '_' and '-' only)", txn, c)
		}
	}
	return nil
}
