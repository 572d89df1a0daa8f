//go:build cpudemo && !linux

// The cpudemo build measures its spins on the per-thread CPU clock, which
// this package reads on Linux only; elsewhere it refuses to start rather
// than run a candidate that does not cost what it says.

package cli

import (
	"fmt"
	"os"

	"github.com/sharebench/sharebench/reports"
)

func init() {
	fmt.Fprintln(os.Stderr, "sharebench: the cpudemo build runs on Linux only (it reads the per-thread CPU clock); build without -tags cpudemo")
	os.Exit(reports.ExitUsage)
}
