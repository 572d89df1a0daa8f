// This file holds FormatDuration, how latencies are printed.

package loadgen

import (
	"fmt"
	"time"
)

// FormatDuration prints a latency with three significant figures.
func FormatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3gms", float64(d)/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.3gµs", float64(d)/1e3)
	}
	return fmt.Sprintf("%dns", int64(d))
}
