// Package reports turns sharebench run directories into reports people and
// CI can read: plots (SVG and PNG), a self-contained report.html (a summary
// that fits a screen — verdict, per-mode table, one anomaly line, a noise
// note, two plots — then the details: the workload as the YAML that ran,
// the environment, every plot, anomalies, faults, witnesses), a summary.md
// for a pull-request comment, a statistical comparison of a
// candidate against a baseline, and a regression gate with exit codes.
//
// A run directory is what `sharebench run` writes; reports reads only its
// result.json (schema sharebench/result/v1, package loadgen/result):
//
//	run, err := reports.Load("runs/2026-01-02T0304")
//	files, err := reports.Generate("out", run)            // one run
//	files, err := reports.Generate("out", base, cand)     // overlaid, ratios vs base
//
//	cmp := reports.Compare([]*reports.Run{base}, []*reports.Run{cand})
//	cmp.WriteText(os.Stdout)   // table: median ratio, bootstrap CI, Mann–Whitney p
//	cmp.WriteBench(os.Stdout)  // Go benchmark lines for benchstat
//	g := reports.Gate(cmp, reports.GateOptions{MaxThroughputDrop: 0.05, MaxP99Rise: 0.10, Alpha: 0.05})
//	g.WriteText(os.Stdout)
//	os.Exit(g.ExitCode())      // 0 ok, 3 forbidden anomaly, 4 regression, 2 nothing to compare
//
// Every latency is measured from the intended send time (docs/design.md §6); tables
// show the median over a mode's repeats, latency percentiles come from the
// decoded HdrHistograms (falling back to the histogram summary), and the
// percentile-spectrum plots merge all repeats of a mode. Plots are drawn on
// a white panel with dark text so they read on light and dark pages alike;
// colour always identifies a mode, line dash (or bar tint) identifies a run.
//
// Bad input never panics: a missing result.json is an error naming the
// directory (ErrNoResult), and a damaged histogram or series becomes a
// warning in the report instead of a failure.
package reports
