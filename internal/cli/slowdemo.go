//go:build slowdemo

// This file holds the slowdemo build: a deliberately slower candidate for
// demonstrating the A/B gate (scripts/ab-gate.sh, docs/ci-gate.md). Built
// with -tags slowdemo, every transaction commit on the engine target waits
// SHAREBENCH_SLOW_COMMIT (default 5ms) after its decision is logged and
// before its markers are written, as a slower coordinator log write would.
// Normal builds do not contain this file and engineHook stays nil.

package cli

import (
	"fmt"
	"os"
	"time"

	eng "github.com/sharebench/sharebench/engine"
	"github.com/sharebench/sharebench/reports"
)

// slowCommitEnv names the variable that sets the delay.
const slowCommitEnv = "SHAREBENCH_SLOW_COMMIT"

// defaultSlowCommit is the delay when slowCommitEnv is unset.
const defaultSlowCommit = 5 * time.Millisecond

func init() {
	delay := defaultSlowCommit
	if v := os.Getenv(slowCommitEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "sharebench: %s=%q: not a duration like 5ms; set it to one or unset it\n", slowCommitEnv, v)
			os.Exit(reports.ExitUsage)
		}
		delay = d
	}
	fmt.Fprintf(os.Stderr, "sharebench: slowdemo build: every transaction commit on the engine target is delayed %v (%s)\n", delay, slowCommitEnv)
	if delay == 0 {
		return
	}
	// The hook runs with the transaction's shard lock held (engine.Hook),
	// so the delay also holds back whatever shares that shard: a slow log
	// write under a lock, the kind of regression the gate should catch.
	engineHook = func(pt eng.HookPoint, info eng.HookInfo) error {
		if pt == eng.HookTxnPrepared && info.Commit {
			time.Sleep(delay)
		}
		return nil
	}
}
