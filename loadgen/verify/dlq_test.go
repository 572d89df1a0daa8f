package verify_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

// TestDLQJudgement: with a dead-letter queue, an input archived by a reject
// or at the delivery limit needs exactly one dead-letter record (at least
// one when the target promises only that), and no other input may have
// one; a dead-letter record without provenance leaves the run
// INCONCLUSIVE.
func TestDLQJudgement(t *testing.T) {
	t.Parallel()
	rejected := in(1, vocab.StateArchived, 1)
	rejected.Rejected = true
	atLimit := in(2, vocab.StateArchived, limit)
	acked := in(3, vocab.StateAcknowledged, 1)
	unprocessed := in(4, vocab.StateArchived, 1) // archived-unprocessed: no DLQ judgement
	kafkaAtLimit := verify.Input{ID: 5, Partition: 1, Offset: 5, FinalState: vocab.StateUnknown, DeliveryCount: limit, BelowSPSO: true}
	dl := func(ins ...verify.Input) []verify.DLQRecord {
		var out []verify.DLQRecord
		for i, x := range ins {
			out = append(out, verify.DLQRecord{Partition: x.Partition, Offset: x.Offset, DLQOffset: int64(i)})
		}
		return out
	}
	base := []verify.Input{rejected, atLimit, acked}
	outs := []verify.Output{plain(3)}
	tests := []struct {
		name    string
		ins     []verify.Input
		dlqs    []verify.DLQRecord
		opts    verify.Options
		want    map[vocab.Finding]int64
		verdict string
		dels    []verify.Delivery
	}{
		{"each archived once", base, dl(rejected, atLimit), verify.Options{DLQ: true},
			map[vocab.Finding]int64{"rejected": 1, "archived-at-limit": 1}, verify.VerdictPass, nil},
		{"no DLQ configured: nothing judged", base, nil, verify.Options{},
			map[vocab.Finding]int64{"rejected": 1, "archived-at-limit": 1}, verify.VerdictPass, nil},
		{"a reject's dead letter missing", base, dl(atLimit), verify.Options{DLQ: true},
			map[vocab.Finding]int64{"rejected": 1, "archived-at-limit": 1, "dlq-missing": 1}, verify.VerdictFail, nil},
		{"an archive at the limit written twice", base, dl(rejected, atLimit, atLimit), verify.Options{DLQ: true},
			map[vocab.Finding]int64{"rejected": 1, "archived-at-limit": 1, "dlq-duplicate": 1}, verify.VerdictFail, nil},
		{"written twice, at least once promised", base, dl(rejected, atLimit, atLimit), verify.Options{DLQ: true, DLQAtLeastOnce: true},
			map[vocab.Finding]int64{"rejected": 1, "archived-at-limit": 1, "dlq-duplicate": 1}, verify.VerdictPass, nil},
		{"an accepted record dead-lettered", base, dl(rejected, atLimit, acked), verify.Options{DLQ: true},
			map[vocab.Finding]int64{"rejected": 1, "archived-at-limit": 1, "dlq-duplicate": 1}, verify.VerdictFail, nil},
		{"a dead letter naming no input", base, append(dl(rejected, atLimit), verify.DLQRecord{Partition: 7, Offset: 70, DLQOffset: 9}), verify.Options{DLQ: true},
			map[vocab.Finding]int64{"rejected": 1, "archived-at-limit": 1, "dlq-duplicate": 1}, verify.VerdictFail, nil},
		{"archived-unprocessed is its own anomaly", append(base, unprocessed), dl(rejected, atLimit), verify.Options{DLQ: true},
			map[vocab.Finding]int64{"rejected": 1, "archived-at-limit": 1, "archived-unprocessed": 1}, verify.VerdictFail, nil},
		{"at the limit below SPSO (no share state) needs its dead letter", append(base, kafkaAtLimit), dl(rejected, atLimit), verify.Options{DLQ: true},
			map[vocab.Finding]int64{"rejected": 1, "archived-at-limit": 2, "dlq-missing": 1}, verify.VerdictFail,
			[]verify.Delivery{{InputID: 5, DeliveryCount: limit, Ack: verify.AckNone, AckOutcome: verify.AckNotSent}}},
		{"no provenance", base, append(dl(rejected, atLimit), verify.DLQRecord{Partition: -1, Offset: -1, DLQOffset: 5}), verify.Options{DLQ: true},
			map[vocab.Finding]int64{"rejected": 1, "archived-at-limit": 1}, verify.VerdictInconclusive, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.opts.DeliveryLimit = limit
			v := verify.New("transactional", tc.opts)
			for _, x := range tc.ins {
				v.AddInput(x)
			}
			for _, o := range outs {
				v.AddOutput(o)
			}
			for _, d := range tc.dlqs {
				v.AddDLQ(d)
			}
			for _, d := range tc.dels {
				v.AddDelivery(d)
			}
			got := v.Finish()
			if !maps.Equal(got.Counts, tc.want) || got.Verdict != tc.verdict {
				t.Fatalf("counts %v verdict %s (notes %q), want %v %s", got.Counts, got.Verdict, got.Notes, tc.want, tc.verdict)
			}
			for _, k := range []vocab.Finding{vocab.KindDLQMissing, vocab.KindDLQDuplicate} {
				if got.Counts[k] > 0 && (len(got.Witnesses[k]) == 0 || got.Witnesses[k][0].Detail == "") {
					t.Fatalf("%s found without a witness: %+v", k, got.Witnesses[k])
				}
			}
		})
	}
}

// TestDLQLedger: a ledger directory whose ledger.json names a DLQ topic is
// judged with its dlq.jsonl; a missing or malformed dlq.jsonl is refused
// with the file and line.
func TestDLQLedger(t *testing.T) {
	t.Parallel()
	rejected := in(1, vocab.StateArchived, 1)
	rejected.Rejected = true
	write := func(t *testing.T, meta verify.Meta, dlq string) string {
		dir := t.TempDir()
		if err := verify.WriteLedgers(dir, []verify.Input{rejected, in(2, vocab.StateAcknowledged, 1)}, []verify.Output{plain(2)}); err != nil {
			t.Fatal(err)
		}
		if err := verify.WriteMeta(dir, meta); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, verify.DeliveriesFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if dlq != "-" {
			if err := os.WriteFile(filepath.Join(dir, verify.DLQFile), []byte(dlq), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	meta := verify.Meta{Mode: "explicit", Target: "engine", DeliveryLimit: limit, ShareState: true, DeliveryCounts: true, DLQTopic: "dlq.x"}
	good := `{"source_topic":"in","partition":0,"offset":10,"delivery_count":1,"message":"Offset rejected by client.","dlq_partition":0,"dlq_offset":0}` + "\n"
	for _, tc := range []struct {
		name, dlq string
		meta      verify.Meta
		counts    map[vocab.Finding]int64
		refused   string // a LedgerError naming this
	}{
		{"judged", good, meta, map[vocab.Finding]int64{"rejected": 1}, ""},
		{"twice", good + strings.Replace(good, `"dlq_offset":0`, `"dlq_offset":1`, 1), meta, map[vocab.Finding]int64{"rejected": 1, "dlq-duplicate": 1}, ""},
		{"none", "", meta, map[vocab.Finding]int64{"rejected": 1, "dlq-missing": 1}, ""},
		{"no DLQ in ledger.json: dlq.jsonl ignored", "", func() verify.Meta { m := meta; m.DLQTopic = ""; return m }(), map[vocab.Finding]int64{"rejected": 1}, ""},
		{"missing file", "-", meta, nil, "dlq.jsonl: missing"},
		{"unknown field", strings.Replace(good, `"dlq_offset":0`, `"dlq_offset":0,"extra":1`, 1), meta, nil, "dlq.jsonl:1: unknown field"},
		{"missing field", strings.Replace(good, `"dlq_partition":0,`, "", 1), meta, nil, `dlq.jsonl:1: missing field "dlq_partition"`},
		{"missing message", strings.Replace(good, `"message":"Offset rejected by client.",`, "", 1), meta, nil, `dlq.jsonl:1: missing field "message"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := verify.VerifyDir("explicit", write(t, tc.meta, tc.dlq), verify.Options{})
			if tc.refused != "" {
				if !errors.Is(err, verify.ErrCorruptLedger) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("err %v, want a corrupt-ledger error naming %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got.Counts, tc.counts) {
				t.Fatalf("counts %v, want %v", got.Counts, tc.counts)
			}
		})
	}
}
