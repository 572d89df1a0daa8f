// This file holds the process exit codes: the sharebench CLI exits with
// them, and a gate's verdict maps onto them (GateResult.ExitCode), so a CI
// job built on this package exits as the CLI would.

package reports

// Exit codes.
const (
	ExitOK      = 0
	ExitRuntime = 1 // something failed while running
	// ExitUsage: bad flags, a bad workload or input file; for compare and
	// gate also runs that cannot be compared (nothing measured on both
	// sides, too few repeats to reach significance).
	ExitUsage = 2
	// ExitAnomaly: a forbidden exactly-once anomaly was found (for the
	// gate: in the candidate).
	ExitAnomaly = 3
	// ExitRegression: the gate found a significant regression, or a mode
	// stopped producing results.
	ExitRegression = 4
	// ExitInconclusive: no forbidden anomaly, but the verifier could not
	// judge the run (a drain that timed out, inputs it could not judge).
	ExitInconclusive = 5
	// ExitInterrupted follows the shell's 128+SIGINT: a SIGINT or SIGTERM
	// stopped the run; what it measured is written.
	ExitInterrupted = 130
)
