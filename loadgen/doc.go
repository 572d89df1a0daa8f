// Package loadgen is sharebench's load generator: it runs a workload
// (package workloads) against a target (package targets: the embedded
// engine or a Kafka cluster) in each acknowledgement mode, measures
// throughput and latency from the intended send time into HdrHistograms,
// records every input and output in ledgers (package ledger, which the
// simulator shares), and has the verifier (package verify) judge each
// mode's exactly-once outcome. Run returns one
// result.Result; the formatters print it as text, JSON or Go benchmark
// lines, and with Config.OutDir it writes the run directory (package
// result owns its layout) that reports renders.
//
// Each mode's worker logic is the pure state machine of package pipeline;
// loadgen drives it with one goroutine per worker, with producers on an
// open-loop schedule, faults on the mode's timeline and a drain that reads
// the outputs back at both isolation levels.
//
// Typical use:
//
//	tgt, _ := enginetarget.New(enginetarget.Options{})
//	res, err := loadgen.Run(ctx, loadgen.Config{Workload: spec, Target: tgt, Seed: 42})
//	loadgen.TextFormatter{}.Format(os.Stdout, res)
//
// Every random choice comes from Config.Seed, which the result records.
package loadgen
