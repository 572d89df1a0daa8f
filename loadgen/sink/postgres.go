package sink

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is the PostgreSQL sink: a pre-commit writes the entries and
// PREPARE TRANSACTIONs them under the transaction id (as Flink's
// exactly-once JDBC sink does through XA), Commit is COMMIT PREPARED,
// Abort ROLLBACK PREPARED, and Prepared reads pg_prepared_xacts. The
// database needs max_prepared_transactions above zero (PostgreSQL's
// default is 0: two-phase commit disabled).
//
// Tables (created when missing): sharebench_sink holds the entries;
// sharebench_sink_txn one row per transaction, written inside it, so a
// transaction is committed exactly when its row is visible;
// sharebench_sink_aborted one row per transaction rolled back after its
// pre-commit (written after the rollback; informational).
type Postgres struct {
	pool *pgxpool.Pool
	name string
}

const pgSchema = `
CREATE TABLE IF NOT EXISTS sharebench_sink (
	gid text NOT NULL, input_id bigint NOT NULL, worker integer NOT NULL, intended_ns bigint NOT NULL);
CREATE INDEX IF NOT EXISTS sharebench_sink_gid ON sharebench_sink (gid text_pattern_ops);
CREATE TABLE IF NOT EXISTS sharebench_sink_txn (gid text PRIMARY KEY);
CREATE TABLE IF NOT EXISTS sharebench_sink_aborted (gid text PRIMARY KEY);`

// OpenPostgres connects to the database at rawURL, checks that two-phase
// commit is enabled and creates the tables.
func OpenPostgres(ctx context.Context, rawURL string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("sink: postgres URL %q: %w", redact(rawURL), err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("sink: postgres URL %q: %w", redact(rawURL), err)
	}
	p := &Postgres{pool: pool, name: "postgres " + redact(rawURL)}
	var mpt string
	if err := pool.QueryRow(ctx, "SHOW max_prepared_transactions").Scan(&mpt); err != nil {
		pool.Close()
		return nil, fmt.Errorf("sink: connecting to %s: %w (is it running? scripts/postgres/up starts one)", redact(rawURL), err)
	}
	if n, _ := strconv.Atoi(mpt); n <= 0 {
		pool.Close()
		return nil, fmt.Errorf("sink: %s has max_prepared_transactions = %s: two-phase commit is disabled; set it above zero (in postgresql.conf, then restart; scripts/postgres/up does)", redact(rawURL), mpt)
	}
	if _, err := pool.Exec(ctx, pgSchema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("sink: creating the sink tables in %s: %w", redact(rawURL), err)
	}
	return p, nil
}

// redact hides a password in a URL.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func (p *Postgres) Name() string { return p.name }

// quoteLiteral quotes a transaction id (already checked by ValidTxn) as an
// SQL string literal: PREPARE TRANSACTION takes no parameters.
func quoteLiteral(s string) string { return "'" + s + "'" }

func (p *Postgres) PreCommit(ctx context.Context, txn string, entries []Entry) error {
	if err := ValidTxn(txn); err != nil {
		return err
	}
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	defer conn.Release()
	c := conn.Conn()
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("sink: pre-commit %s: %w", txn, err)
	}
	fail := func(err error) error {
		_, rerr := c.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		if rerr != nil {
			// The session's state is unknown: drop the connection.
			_ = c.Close(context.WithoutCancel(ctx))
		}
		return fmt.Errorf("sink: pre-commit %s: %w", txn, err)
	}
	rows := make([][]any, len(entries))
	for i, e := range entries {
		rows[i] = []any{txn, int64(e.InputID), int32(e.Worker), e.IntendedNs}
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"sharebench_sink"}, []string{"gid", "input_id", "worker", "intended_ns"}, pgx.CopyFromRows(rows)); err != nil {
		return fail(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO sharebench_sink_txn (gid) VALUES ($1)", txn); err != nil {
		return fail(err)
	}
	if _, err := c.Exec(ctx, "PREPARE TRANSACTION "+quoteLiteral(txn)); err != nil {
		return fail(err)
	}
	return nil
}

// undefinedObject is SQLSTATE 42704, which COMMIT PREPARED and ROLLBACK
// PREPARED return for a transaction id that is not prepared.
func undefinedObject(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42704"
}

func (p *Postgres) committed(ctx context.Context, txn string) (bool, error) {
	var n int
	err := p.pool.QueryRow(ctx, "SELECT count(*) FROM sharebench_sink_txn WHERE gid = $1", txn).Scan(&n)
	return n > 0, err
}

func (p *Postgres) Commit(ctx context.Context, txn string) error {
	if err := ValidTxn(txn); err != nil {
		return err
	}
	_, err := p.pool.Exec(ctx, "COMMIT PREPARED "+quoteLiteral(txn))
	if err == nil {
		return nil
	}
	if !undefinedObject(err) {
		return fmt.Errorf("sink: commit %s: %w", txn, err)
	}
	done, qerr := p.committed(ctx, txn)
	switch {
	case qerr != nil:
		return fmt.Errorf("sink: commit %s: %w", txn, qerr)
	case done:
		return nil
	}
	return fmt.Errorf("%w: %q", ErrNotPrepared, txn)
}

func (p *Postgres) Abort(ctx context.Context, txn string) error {
	if err := ValidTxn(txn); err != nil {
		return err
	}
	_, err := p.pool.Exec(ctx, "ROLLBACK PREPARED "+quoteLiteral(txn))
	if err != nil {
		if !undefinedObject(err) {
			return fmt.Errorf("sink: abort %s: %w", txn, err)
		}
		done, qerr := p.committed(ctx, txn)
		switch {
		case qerr != nil:
			return fmt.Errorf("sink: abort %s: %w", txn, qerr)
		case done:
			return fmt.Errorf("%w: %q", ErrCommitted, txn)
		}
		return nil // never prepared, or rolled back already
	}
	if _, err := p.pool.Exec(ctx, "INSERT INTO sharebench_sink_aborted (gid) VALUES ($1) ON CONFLICT DO NOTHING", txn); err != nil {
		return fmt.Errorf("sink: recording the abort of %s: %w", txn, err)
	}
	return nil
}

func (p *Postgres) Prepared(ctx context.Context, prefix string) ([]string, error) {
	return p.strings(ctx, "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() AND starts_with(gid, $1) ORDER BY gid", prefix)
}

func (p *Postgres) strings(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	return out, nil
}

func (p *Postgres) Read(ctx context.Context, prefix string) (Contents, error) {
	var c Contents
	var err error
	if c.Prepared, err = p.Prepared(ctx, prefix); err != nil {
		return c, err
	}
	if c.Aborted, err = p.strings(ctx, "SELECT gid FROM sharebench_sink_aborted WHERE starts_with(gid, $1) ORDER BY gid", prefix); err != nil {
		return c, err
	}
	rows, err := p.pool.Query(ctx, "SELECT gid, input_id, worker, intended_ns FROM sharebench_sink WHERE starts_with(gid, $1)", prefix)
	if err != nil {
		return c, fmt.Errorf("sink: reading back: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r      Row
			id     int64
			worker int32
		)
		if err := rows.Scan(&r.Txn, &id, &worker, &r.IntendedNs); err != nil {
			return c, fmt.Errorf("sink: reading back: %w", err)
		}
		r.InputID, r.Worker = uint64(id), uint16(worker)
		c.Committed = append(c.Committed, r)
	}
	return c, rows.Err()
}

func (p *Postgres) Close() error {
	p.pool.Close()
	return nil
}
