// This file builds what report.html and summary.md show besides the table:
// the environment, the workloads (as the YAML that ran), the faults
// timeline, the anomaly witnesses and the overall verdict.

package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/vocab"
)

// envTable is the environment: one row per field, one column per run.
type envTable struct {
	Runs []string
	Rows []envRow
}

type envRow struct {
	Key    string
	Values []string
}

func buildEnv(runs []*runData) envTable {
	t := envTable{}
	fields := []struct {
		key string
		get func(r *result.Result) string
	}{
		{"commit", func(r *result.Result) string { return r.Env.Commit }},
		{"Go version", func(r *result.Result) string { return r.Env.GoVersion }},
		{"OS / arch", func(r *result.Result) string { return join(" / ", r.Env.OS, r.Env.Arch) }},
		{"CPU", func(r *result.Result) string {
			if r.Env.NumCPU > 0 {
				return join(" · ", r.Env.CPU, strconv.Itoa(r.Env.NumCPU)+" CPUs")
			}
			return r.Env.CPU
		}},
		{"GOMAXPROCS", func(r *result.Result) string { return positive(r.Env.GOMAXPROCS) }},
		{"target", func(r *result.Result) string {
			if r.Env.Embedded {
				return join(" ", r.Env.Target.String(), "(embedded)")
			}
			return r.Env.Target.String()
		}},
		{"brokers", func(r *result.Result) string { return r.Env.Brokers }},
		{"broker version", func(r *result.Result) string { return r.Env.BrokerVersion }},
		{"seed", func(r *result.Result) string { return strconv.FormatInt(r.Seed, 10) }},
		{"started", func(r *result.Result) string {
			if r.Started.IsZero() {
				return ""
			}
			return r.Started.UTC().Format(time.RFC3339)
		}},
		{"load", func(r *result.Result) string {
			if r.OpenLoop {
				return fmt.Sprintf("open loop, %s inputs/s intended", formatNumber(r.Rate))
			}
			return "closed loop (max throughput)"
		}},
		{"duration / warm-up", func(r *result.Result) string {
			return fmt.Sprintf("%v measured / %v warm-up (excluded)", r.Duration, r.Warmup)
		}},
		{"repeats", func(r *result.Result) string { return positive(r.Repeats) }},
		{"topic prefix", func(r *result.Result) string { return r.TopicPrefix }},
		{"command", func(r *result.Result) string { return strings.Join(r.Args, " ") }},
		{"notes", func(r *result.Result) string { return strings.Join(r.Env.Notes, "; ") }},
	}
	for _, rd := range runs {
		t.Runs = append(t.Runs, rd.label)
	}
	for _, f := range fields {
		row := envRow{Key: f.key}
		empty := true
		for _, rd := range runs {
			v := f.get(rd.run.Result)
			if v != "" {
				empty = false
			} else {
				v = "—"
			}
			row.Values = append(row.Values, v)
		}
		if !empty || f.key == "commit" || f.key == "broker version" {
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

func join(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

func positive(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// workloadView is one distinct workload and the runs that used it.
type workloadView struct {
	Name   string
	Source string // the file or built-in name the run was given, when it differs from Name
	Runs   []string
	Spec   string // the YAML that ran; indented JSON for a result without it
	JSON   bool   // Spec is the JSON fallback
	Notes  []string
}

// workloadName is the workload's own name: the name inside its spec (an
// OMB file's name field, a built-in's name), else the base name of the
// file it was read from, without its extension.
func workloadName(r *result.Result) string {
	var named struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(r.Spec, &named) == nil && named.Name != "" {
		return named.Name
	}
	if r.Workload == "" {
		return "(unnamed)"
	}
	base := filepath.Base(r.Workload)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

func buildWorkloads(runs []*runData) []workloadView {
	var out []workloadView
	for _, rd := range runs {
		r := rd.run.Result
		w := workloadView{Name: workloadName(r), Spec: r.SpecYAML, Notes: r.SpecNotes}
		if r.Workload != w.Name {
			w.Source = r.Workload
		}
		if w.Spec == "" {
			w.Spec, w.JSON = "(no spec recorded)", true
			if len(bytes.TrimSpace(r.Spec)) > 0 {
				var b bytes.Buffer
				if err := json.Indent(&b, r.Spec, "", "  "); err == nil {
					w.Spec = b.String()
				} else {
					w.Spec = string(r.Spec)
				}
			}
		}
		if i := slices.IndexFunc(out, func(o workloadView) bool {
			return o.Name == w.Name && o.Spec == w.Spec && slices.Equal(o.Notes, w.Notes)
		}); i >= 0 {
			out[i].Runs = append(out[i].Runs, rd.label)
			continue
		}
		w.Runs = []string{rd.label}
		out = append(out, w)
	}
	return out
}

// faultRow is one fault event of the timeline.
type faultRow struct {
	Run, Mode            string
	Repeat               int
	Scheduled, At, End   string // "" where the event has none
	Kind, Broker, Detail string
	Role                 string // "2 → 3 → 3": who held the selector's role; "" without one
}

func buildFaults(runs []*runData) []faultRow {
	var out []faultRow
	for _, mode := range modeNames(runs) {
		for _, rd := range runs {
			md := rd.find(mode)
			if md == nil {
				continue
			}
			for _, rp := range md.repeats {
				evs := slices.Clone(rp.m.Faults)
				slices.SortStableFunc(evs, func(a, b result.FaultEvent) int {
					switch {
					case a.AtNs < b.AtNs:
						return -1
					case a.AtNs > b.AtNs:
						return 1
					}
					return 0
				})
				for _, f := range evs {
					out = append(out, faultRow{
						Run: rd.label, Mode: mode, Repeat: rp.m.Repeat,
						Scheduled: optSeconds(f.ScheduledNs), At: fmt.Sprintf("%.3f s", float64(f.AtNs)/1e9), End: optSeconds(f.EndNs),
						Kind: f.Kind, Broker: brokerLabel(f), Detail: f.Detail, Role: roleLabel(f),
					})
				}
			}
		}
	}
	return out
}

// witnessGroup is the evidence for one kind in one repeat.
type witnessGroup struct {
	Run, Mode string
	Repeat    int
	Kind      vocab.Finding
	Forbidden bool
	Count     int64 // findings of this kind; Rows may hold fewer
	Rows      []witnessRow
}

type witnessRow struct {
	ID, Where, State, Deliveries, Outputs, Detail string
}

// maxWitnessRows bounds the rows shown per kind and repeat.
const maxWitnessRows = 50

func buildWitnesses(runs []*runData) []witnessGroup {
	var out []witnessGroup
	for _, mode := range modeNames(runs) {
		for _, rd := range runs {
			md := rd.find(mode)
			if md == nil {
				continue
			}
			for _, rp := range md.repeats {
				v := rp.m.Verify
				if v == nil || len(v.Witnesses) == 0 {
					continue
				}
				kinds := make([]vocab.Finding, 0, len(v.Witnesses))
				for k := range v.Witnesses {
					kinds = append(kinds, k)
				}
				// Forbidden kinds first, then the rest by name.
				slices.SortFunc(kinds, func(a, b vocab.Finding) int {
					fa, fb := slices.Contains(v.Forbidden, a), slices.Contains(v.Forbidden, b)
					if fa != fb {
						if fa {
							return -1
						}
						return 1
					}
					return strings.Compare(string(a), string(b))
				})
				for _, k := range kinds {
					ws := v.Witnesses[k]
					if len(ws) == 0 {
						continue
					}
					g := witnessGroup{Run: rd.label, Mode: mode, Repeat: rp.m.Repeat, Kind: k,
						Forbidden: slices.Contains(v.Forbidden, k), Count: v.Counts[k]}
					if g.Count < int64(len(ws)) {
						g.Count = int64(len(ws))
					}
					for i, w := range ws {
						if i == maxWitnessRows {
							break
						}
						g.Rows = append(g.Rows, witnessRowOf(w))
					}
					out = append(out, g)
				}
			}
		}
	}
	return out
}

func witnessRowOf(w result.Witness) witnessRow {
	row := witnessRow{
		ID:     strconv.FormatUint(w.InputID, 10),
		Where:  fmt.Sprintf("p%d @ %d", w.Partition, w.Offset),
		State:  string(w.State),
		Detail: w.Detail,
	}
	if w.DeliveryCount > 0 {
		row.Deliveries = strconv.Itoa(w.DeliveryCount)
	}
	var outs []string
	for _, o := range w.Outputs {
		s := fmt.Sprintf("p%d @ %d", o.Partition, o.Offset)
		if o.TransactionalID != "" {
			s += fmt.Sprintf(" txn %s epoch %d", o.TransactionalID, o.Epoch)
		}
		if o.Committed {
			s += " committed"
		} else {
			s += " not committed"
		}
		if o.VisibleNs > 0 {
			s += fmt.Sprintf(", visible at %.3f s", float64(o.VisibleNs)/1e9)
		}
		outs = append(outs, s)
	}
	row.Outputs = strings.Join(outs, "; ")
	return row
}

// overallVerdict sums up the verifier over every run and mode. A forbidden
// anomaly anywhere is FAIL; otherwise a run that was interrupted, a mode
// that failed before its verdict or never ran, or a verdict that left
// inputs unjudged makes it INCONCLUSIVE (naming them), never PASS.
func overallVerdict(runs []*runData) (text, class string) {
	var failed, unjudged, unfinished []string
	verified, interrupted := false, false
	for _, rd := range runs {
		label := func(s string) string {
			if len(runs) > 1 {
				s += " (" + rd.label + ")"
			}
			return s
		}
		if rd.run != nil && rd.run.Result != nil && rd.run.Result.Interrupted {
			interrupted = true
		}
		for _, md := range rd.modes {
			v := verdictOf(md)
			if v.verified > 0 {
				verified = true
			}
			if v.failed == 0 && v.inconclusive > 0 {
				unjudged = append(unjudged, label(md.mode))
			}
			if md.unfinished() {
				unfinished = append(unfinished, label(md.mode)+" "+md.unfinishedWhy())
			}
			if v.failed > 0 {
				s := label(md.mode)
				if len(v.forbidden) > 0 {
					s += ": " + strings.Join(vocab.Names(v.forbidden), ", ")
				}
				failed = append(failed, s)
			}
		}
	}
	switch {
	case len(failed) > 0:
		return "Exactly-once verifier: FAIL — " + strings.Join(failed, "; "), "fail"
	case interrupted || len(unfinished) > 0:
		text = "Exactly-once verifier: INCONCLUSIVE — "
		if interrupted {
			text += "the run was interrupted"
			if len(unfinished) > 0 {
				text += ": "
			}
		} else {
			text += "the run is unfinished: "
		}
		text += strings.Join(unfinished, "; ")
		if len(unjudged) > 0 {
			text += "; the verifier could not judge " + strings.Join(unjudged, ", ")
		}
		return text, "fail"
	case len(unjudged) > 0:
		return "Exactly-once verifier: INCONCLUSIVE — the verifier could not judge " + strings.Join(unjudged, ", ") + " (the drain timed out, or inputs it could not judge)", "fail"
	case verified:
		return "Exactly-once verifier: PASS — no mode shows an anomaly it does not allow", "pass"
	}
	return "Exactly-once verifier: not run", "none"
}

// optSeconds writes ns since the mode's start as seconds, "" for 0 (not
// recorded).
func optSeconds(ns int64) string {
	if ns == 0 {
		return ""
	}
	return fmt.Sprintf("%.3f s", float64(ns)/1e9)
}

// roleLabel shows which node held the selector's role before, during and
// after the fault, "?" where the cluster did not answer; "" for a fault
// whose selector names no role.
func roleLabel(f result.FaultEvent) string {
	if f.RoleBefore == "" && f.RoleDuring == "" && f.RoleAfter == "" {
		return ""
	}
	q := func(s string) string {
		if s == "" {
			return "?"
		}
		return s
	}
	return q(f.RoleBefore) + " → " + q(f.RoleDuring) + " → " + q(f.RoleAfter)
}

// brokerLabel names the broker a fault hit and how it was chosen, like
// "2 (txn-coordinator)".
func brokerLabel(f result.FaultEvent) string {
	switch {
	case f.Broker == "":
		return ""
	case f.Selector == "" || f.Selector == f.Broker:
		return f.Broker
	}
	return f.Broker + " (" + f.Selector + ")"
}
