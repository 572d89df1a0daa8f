// This file writes the .hlog files: one HdrHistogram interval log per
// histogram of a mode, holding exactly the samples of its result.

package loadgen

import (
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/sharebench/sharebench/loadgen/result"
)

// writeHlogs writes one HdrHistogram interval log per histogram that has
// samples.
func (mr *modeRun) writeHlogs() error {
	dir := mr.cfg.OutDir
	hlogs := map[string]*intervals{
		result.HistEndToEnd: mr.ivE2E, result.HistSendLag: mr.ivLag, result.HistProduce: mr.ivProduce,
		result.HistCommit: mr.ivCommit, result.HistPollCommit: mr.ivP2C,
	}
	names := make([]string, 0, len(hlogs))
	for n := range hlogs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		path := result.HlogPath(dir, mr.name, n)
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("loadgen: %w", err)
		}
		wrote, werr := hlogs[n].writeHlog(f, fmt.Sprintf("sharebench mode=%s histogram=%s unit=ns", mr.name, n))
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("loadgen: writing %s: %w", path, err)
		}
		if !wrote {
			// No sample in the window: no log (as result.json has no
			// samples for it either).
			_ = os.Remove(path)
		}
	}
	return nil
}
