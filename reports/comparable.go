// This file holds CheckComparable: compare and gate compare like with
// like, so runs whose workload, input rate, target kind or mode set differ
// are refused unless the caller allows the mismatch.

package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrMismatch is wrapped by CheckComparable's error.
var ErrMismatch = errors.New("the runs do not compare like with like")

// runKey is what two compared runs must share.
type runKey struct {
	workload string
	rate     string
	target   string
	modes    string
}

func keyOf(r *Run) runKey {
	res := r.Result
	k := runKey{workload: res.Workload, target: res.Env.Target.String()}
	var spec struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(res.Spec, &spec) == nil && spec.Name != "" {
		k.workload = spec.Name
	}
	if res.OpenLoop {
		k.rate = fmt.Sprintf("%g records/s", res.Rate)
	} else {
		k.rate = "closed loop"
	}
	var modes []string
	for _, m := range res.Modes {
		if !slices.Contains(modes, m.Mode.String()) {
			modes = append(modes, m.Mode.String())
		}
	}
	slices.Sort(modes)
	k.modes = strings.Join(modes, ",")
	return k
}

// CheckComparable returns nil when every run has the workload, input rate,
// target kind and mode set of the first baseline run, else an error
// wrapping ErrMismatch that lists each difference. Runs without a result
// are skipped (Compare notes them).
func CheckComparable(baseline, candidate []*Run) error {
	var ref *Run
	var diffs []string
	for _, r := range append(append([]*Run{}, baseline...), candidate...) {
		if r == nil || r.Result == nil {
			continue
		}
		if ref == nil {
			ref = r
			continue
		}
		a, b := keyOf(ref), keyOf(r)
		for _, d := range [][3]string{
			{"workload", a.workload, b.workload},
			{"rate", a.rate, b.rate},
			{"target", a.target, b.target},
			{"modes", a.modes, b.modes},
		} {
			if d[1] != d[2] {
				diffs = append(diffs, fmt.Sprintf("%s %s in %s, %s in %s", d[0], d[1], labelOf(ref), d[2], labelOf(r)))
			}
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrMismatch, strings.Join(diffs, "; "))
}

func labelOf(r *Run) string {
	if r.Dir != "" {
		return r.Dir
	}
	return r.Name
}
