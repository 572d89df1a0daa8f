// This file holds the fuzz target of the ledger reader: any bytes as a
// ledger directory's files must read back as a verdict or as one
// *LedgerError naming the file and line, never a panic; and a line the
// fast decoders accept decodes exactly as encoding/json decodes it.

package verify_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/verify"
)

func FuzzReadLedgers(f *testing.F) {
	in := `{"id":1,"partition":0,"offset":0,"intended_ns":0,"final_state":"ACKNOWLEDGED","delivery_count":1}`
	out := `{"id":1,"partition":0,"offset":0,"transactional_id":"w-0","producer_id":7,"epoch":0,"txn_seq":1,"txn_size":1,"txn_outcome":"committed","commit_sent":true,"committed":true,"read_uncommitted":true,"marker":"commit","marker_epoch":1,"visible_ns":5}`
	del := `{"id":1,"worker":0,"at_ns":1,"delivery_count":1,"ack":"accept","ack_outcome":"committed","transactional_id":"w-0","txn_seq":1}`
	meta := `{"schema":"sharebench/ledger/v2","mode":"transactional","target":"engine","delivery_limit":5,"drain_timed_out":false,"incomplete":[],"share_state":true,"delivery_counts":true,"markers":true,"dlq_topic":"","dlq_at_least_once":false,"open_transactions":[]}`
	f.Add(in, out, del, meta)
	f.Add(in, out, del, "")
	f.Add(`{"id":1}`, `{"id":"x"}`, `{}`, `{"schema":"sharebench/ledger/v2","open_transactions":[{"partition":0,"producer_id":1,"epoch":0,"first_offset":3,"source":"target"}]}`)
	f.Add(in, out, del, strings.Replace(meta, `"open_transactions":[]`, `"open_transactions":[{"partition":0,"producer_id":1,"epoch":0,"first_offset":3,"source":"target"}]`, 1))
	f.Add(in, out, "\n"+del, meta)
	f.Add(in+"\n"+in, out, del, meta)
	f.Fuzz(func(t *testing.T, ins, outs, dels, meta string) {
		dir := t.TempDir()
		write := func(name, body string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(verify.InputsFile, ins)
		write(verify.OutputsFile, outs)
		write(verify.DeliveriesFile, dels)
		if meta != "" {
			write(verify.MetaFile, meta)
		}
		res, err := verify.VerifyDir("transactional", dir, verify.Options{DeliveryLimit: 5})
		if err != nil {
			if !errors.Is(err, verify.ErrCorruptLedger) {
				t.Fatalf("error %v does not match ErrCorruptLedger", err)
			}
			return
		}
		switch res.Verdict {
		case verify.VerdictPass, verify.VerdictFail, verify.VerdictInconclusive:
		default:
			t.Fatalf("verdict %q", res.Verdict)
		}
		if res.Pass != (res.Verdict == verify.VerdictPass) {
			t.Fatalf("Pass %v with verdict %s", res.Pass, res.Verdict)
		}
		for _, line := range []string{ins, outs, dels} {
			if msg := sameAsJSON([]byte(line)); msg != "" {
				t.Fatalf("line %q: %s", line, msg)
			}
		}
	})
}
