// This file pins Format's text with an example and checks its edge cases.

package verify_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

func ExampleFormat() {
	v := verify.New("transactional", verify.Options{DeliveryLimit: 5, MaxWitnesses: 1})
	v.AddInput(verify.Input{ID: 1, Partition: 0, Offset: 16, FinalState: vocab.StateAcknowledged, DeliveryCount: 1})
	v.AddInput(verify.Input{ID: 2, Partition: 0, Offset: 17, FinalState: vocab.StateAcknowledged, DeliveryCount: 2})
	v.AddInput(verify.Input{ID: 3, Partition: 1, Offset: 4, FinalState: vocab.StateArchived, DeliveryCount: 5})
	v.AddOutput(verify.Output{InputID: 1, Partition: 3, Offset: 120, TransactionalID: "w-1", Epoch: 5, TxnSeq: 9, TxnSize: 2, VisibleNs: 12_500_000})
	v.AddOutput(verify.Output{InputID: 2, Partition: 3, Offset: 121, TransactionalID: "w-1", Epoch: 5, TxnSeq: 9, TxnSize: 2, Committed: true, VisibleNs: 12_600_000})
	v.AddOutput(verify.Output{InputID: 2, Partition: 2, Offset: 7, Epoch: -1, Committed: true, VisibleNs: 13_000_000})
	verify.Format(os.Stdout, "transactional", v.Finish())
	// Output:
	// verify transactional: FAIL (3 inputs, 3 outputs; forbidden: duplicate, lost, torn-transaction)
	// allowed: none
	// counts:
	//   lost                          1  forbidden
	//   duplicate                     1  forbidden
	//   torn-transaction              1  forbidden
	//   archived-at-limit             1  info
	// witnesses:
	//   lost id=1 input=p0@16 state=ACKNOWLEDGED deliveries=1: acknowledged but no committed output; 1 seen only uncommitted
	//     output p3@120 txn=w-1 epoch=5 uncommitted visible=12.5ms
	//   duplicate id=2 input=p0@17 state=ACKNOWLEDGED deliveries=2: 2 committed outputs for one input
	//     output p2@7 txn=none epoch=-1 committed visible=13ms
	//     output p3@121 txn=w-1 epoch=5 committed visible=12.6ms
	//   torn-transaction id=1 input=p0@16 state=ACKNOWLEDGED deliveries=1: transaction "w-1" epoch 5 seq 9: 1 of 2 outputs committed, 1 seen only uncommitted, 0 aborted; it wrote 2
	//     output p3@120 txn=w-1 epoch=5 uncommitted visible=12.5ms
	//     output p3@121 txn=w-1 epoch=5 committed visible=12.6ms
	//   archived-at-limit id=3 input=p1@4 state=ARCHIVED deliveries=5: archived after 5 deliveries, limit 5
}

func TestFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    *result.Verification
		want string
	}{
		{"nil", nil, "verify explicit: no verdict\n"},
		{
			name: "pass with allowed duplicates, a phantom kind, notes",
			v: &result.Verification{Pass: true, Allowed: []vocab.Finding{"duplicate"}, Inputs: 2, Outputs: 3,
				Counts:    map[vocab.Finding]int64{"duplicate": 1, "zzz": 2},
				Witnesses: map[vocab.Finding][]result.Witness{"phantom": {{Kind: "phantom", InputID: 9, Detail: "d"}}},
				Notes:     []string{"verify: a note"}},
			want: "verify explicit: PASS (2 inputs, 3 outputs)\nallowed: duplicate\ncounts:\n" +
				"  duplicate                     1  allowed\n  zzz                           2  unknown kind\n" +
				"witnesses:\n  phantom id=9 input=none: d\nnotes:\n  verify: a note\n",
		},
		{
			name: "empty",
			v:    &result.Verification{Pass: true, Allowed: []vocab.Finding{}},
			want: "verify explicit: PASS (0 inputs, 0 outputs)\nallowed: none\ncounts: none\n",
		},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := verify.Format(&b, "explicit", tt.v); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, b.String(), tt.want)
		}
	}
}

type failWriter struct{}

var errWrite = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestWriteErrors(t *testing.T) {
	t.Parallel()
	if err := verify.Format(failWriter{}, "explicit", &result.Verification{}); !errors.Is(err, errWrite) {
		t.Errorf("Format to a failing writer: %v, want %v", err, errWrite)
	}
	e := verify.NewEncoder(failWriter{})
	if err := e.EncodeInput(verify.Input{ID: 1}); err != nil {
		t.Fatalf("buffered EncodeInput: %v", err)
	}
	err := e.Flush()
	if !errors.Is(err, errWrite) || !strings.HasPrefix(err.Error(), "verify: ") {
		t.Errorf("Flush to a failing writer: %v, want a verify: error wrapping %v", err, errWrite)
	}
	if err2 := e.EncodeOutput(verify.Output{InputID: 1}); err2 != err {
		t.Errorf("after a failure EncodeOutput = %v, want the sticky %v", err2, err)
	}
	if err := verify.WriteLedgers("/dev/null/x", nil, nil); err == nil || !strings.HasPrefix(err.Error(), "verify: ") {
		t.Errorf("WriteLedgers to an impossible dir: %v, want a verify: error", err)
	}
}
