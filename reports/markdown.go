// This file renders summary.md: the per-mode table in GitHub Markdown with
// the anomaly and noise lines, for a pull-request comment.

package reports

import (
	"fmt"
	"strings"
)

// mdEscape keeps a cell inside its table column.
func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "\\", "\\\\")
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// mdVerdict is a row's verifier cell, marked by its class.
func mdVerdict(r summaryRow) string {
	v := mdEscape(r.Verdict)
	switch r.VerdictClass {
	case "pass":
		v = "✅ " + v
	case "fail":
		v = "❌ **" + v + "**"
	}
	return v
}

func renderMarkdown(runs []*runData) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", mdEscape(title(runs)))
	verdict, class := overallVerdict(runs)
	mark := ""
	switch class {
	case "pass":
		mark = "✅ "
	case "fail":
		mark = "❌ "
	}
	fmt.Fprintf(&b, "%s**%s**\n\n", mark, mdEscape(verdict))

	t := buildTable(runs)
	head := []string{"mode"}
	align := []string{":--"}
	if t.MultiRun {
		head, align = append(head, "run"), append(align, ":--")
	}
	head, align = append(head, "repeats"), append(align, "--:")
	for _, h := range t.Heads {
		head, align = append(head, h), append(align, "--:")
	}
	head, align = append(head, "verifier"), append(align, ":--")
	fmt.Fprintf(&b, "| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(align, "|"))
	for _, r := range t.Rows {
		cells := []string{mdEscape(r.Mode)}
		if t.MultiRun {
			cells = append(cells, mdEscape(r.Run))
		}
		cells = append(cells, fmt.Sprint(r.Repeats))
		if r.Status != "" {
			for range t.Heads {
				cells = append(cells, "—")
			}
			v := mdEscape(r.Status)
			if r.Verdict != "" {
				v = mdVerdict(r) + " — " + v
			}
			cells = append(cells, v)
		} else {
			for _, c := range r.Cells {
				s := c.Text
				if c.Ratio != "" {
					s += " (" + c.Ratio + ")"
				}
				cells = append(cells, mdEscape(s))
			}
			cells = append(cells, mdVerdict(r))
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	b.WriteString("\n")
	b.WriteString(mdEscape(tableNote(runs, false)) + "\n\n")
	if line, _ := anomalySummary(runs); line != "" {
		b.WriteString(mdEscape(line) + "\n\n")
	}
	if lines, _ := noiseNote(runs); len(lines) > 0 {
		b.WriteString("**Noise:** " + mdEscape(strings.Join(lines, " ")) + "\n\n")
	}

	env := buildEnv(runs)
	keys := []string{"commit", "Go version", "CPU", "GOMAXPROCS", "target", "broker version"}
	for ri, name := range env.Runs {
		var parts []string
		for _, row := range env.Rows {
			for _, k := range keys {
				if row.Key == k && row.Values[ri] != "—" {
					parts = append(parts, k+" "+mdEscape(row.Values[ri]))
				}
			}
		}
		if len(runs) > 1 {
			fmt.Fprintf(&b, "- **%s**: %s\n", mdEscape(name), strings.Join(parts, " · "))
		} else {
			fmt.Fprintf(&b, "<sub>%s</sub>\n", strings.Join(parts, " · "))
		}
	}
	return []byte(b.String())
}
