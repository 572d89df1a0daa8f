// This file checks the fast ledger line decoders against encoding/json:
// on every line, mutated at random or fuzzed, they must return what
// json.Unmarshal returns, errors included.

package verify_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

// sameAsJSON reports a difference between the fast decoders and
// json.Unmarshal on line, or "".
func sameAsJSON(line []byte) string {
	var fi, ji verify.Input
	errF, errJ := verify.DecodeInput(line, &fi), json.Unmarshal(line, &ji)
	if msg := compare(errF, errJ, fi, ji); msg != "" {
		return "input: " + msg
	}
	var fo, jo verify.Output
	errF, errJ = verify.DecodeOutput(line, &fo), json.Unmarshal(line, &jo)
	if msg := compare(errF, errJ, fo, jo); msg != "" {
		return "output: " + msg
	}
	return ""
}

func compare(errF, errJ error, f, j any) string {
	switch {
	case (errF == nil) != (errJ == nil), errF != nil && errF.Error() != errJ.Error():
		return "fast error " + str(errF) + ", json error " + str(errJ)
	case errF == nil && !reflect.DeepEqual(f, j):
		b1, _ := json.Marshal(f)
		b2, _ := json.Marshal(j)
		return "fast " + string(b1) + ", json " + string(b2)
	}
	return ""
}

func str(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// mutations turn a valid line into a tricky one.
var mutations = []func(r *rand.Rand, b []byte) []byte{
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`"id"`), []byte(`"ID"`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.ReplaceAll(b, []byte(`,`), []byte(" ,\t")) },
	func(r *rand.Rand, b []byte) []byte { return bytes.ReplaceAll(b, []byte(`:`), []byte(" : ")) },
	func(r *rand.Rand, b []byte) []byte { return append(b, " \r\n"...) },
	func(r *rand.Rand, b []byte) []byte { return append(b, `x`...) },
	// len(b)+1: an earlier mutation may already have cut the line to nothing.
	func(r *rand.Rand, b []byte) []byte { return b[:r.IntN(len(b)+1)] },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`:1`), []byte(`:1.0`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`:1`), []byte(`:1e2`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`:1`), []byte(`:01`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`:`), []byte(`:-0`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`:1`), []byte(`:-`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`:1`), []byte(`:null`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`:1`), []byte(`:"1"`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`:1`), []byte(`:true`), 1) },
	func(r *rand.Rand, b []byte) []byte {
		return bytes.Replace(b, []byte(`:1`), []byte(`:99999999999999999999`), 1)
	},
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`:1`), []byte(`:40000`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`:1`), []byte(`:-2147483649`), 1) },
	func(r *rand.Rand, b []byte) []byte {
		return bytes.Replace(b, []byte(`:1`), []byte(`:-9223372036854775808`), 1)
	},
	func(r *rand.Rand, b []byte) []byte {
		return bytes.Replace(b, []byte(`:1`), []byte(`:18446744073709551615`), 1)
	},
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`"w`), []byte(`"\u0077`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`"w`), []byte("\"\xff"), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`true`), []byte(`tru`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`true`), []byte(`false`), 1) },
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`}`), []byte(`,}`), 1) },
	func(r *rand.Rand, b []byte) []byte {
		return bytes.Replace(b, []byte(`{`), []byte(`{"extra":[1,{"a":2}],`), 1)
	},
	func(r *rand.Rand, b []byte) []byte { return bytes.Replace(b, []byte(`{`), []byte(`{"id":7,`), 1) },
	func(r *rand.Rand, b []byte) []byte {
		return bytes.Replace(b, []byte(`"final_state":"`), []byte(`"final_state":"A`), 1)
	},
	func(r *rand.Rand, b []byte) []byte { return []byte(`{}`) },
	func(r *rand.Rand, b []byte) []byte { return []byte(`null`) },
	func(r *rand.Rand, b []byte) []byte { return []byte(`[1]`) },
}

func TestDecodeMatchesJSON(t *testing.T) {
	t.Parallel()
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(uint64(seed), 2))
	states := []vocab.RecordState{vocab.StateAcknowledged, vocab.StateArchived, vocab.StateUnknown, "w-odd"}
	nums := []int64{0, 1, 11, -1, 1 << 40}
	num := func() int64 { return nums[r.IntN(len(nums))] }
	for i := range 20000 {
		var line []byte
		if r.IntN(2) == 0 {
			line = verify.AppendInput(nil, verify.Input{ID: uint64(num() & 0xffff), Partition: int32(num()), Offset: num(),
				IntendedNs: num(), FinalState: states[r.IntN(len(states))], DeliveryCount: int(num()),
				Rejected: r.IntN(2) == 0, BelowSPSO: r.IntN(2) == 0})
		} else {
			line = verify.AppendOutput(nil, verify.Output{InputID: uint64(num() & 0xffff), Partition: int32(num()), Offset: num(),
				TransactionalID: string(states[r.IntN(len(states))]), Epoch: int16(num()), TxnSeq: num(), TxnSize: int(num()),
				Committed: r.IntN(2) == 0, Aborted: r.IntN(2) == 0, VisibleNs: num()})
		}
		for range r.IntN(3) {
			line = mutations[r.IntN(len(mutations))](r, line)
		}
		if msg := sameAsJSON(line); msg != "" {
			t.Fatalf("case %d, line %q: %s", i, line, msg)
		}
	}
}

func FuzzDecodeLine(f *testing.F) {
	f.Add([]byte(`{"id":1,"partition":0,"offset":5,"intended_ns":9,"final_state":"ACKNOWLEDGED","delivery_count":1}`))
	f.Add([]byte(`{"id":1,"partition":2,"offset":5,"transactional_id":"w-1","epoch":3,"txn_seq":4,"txn_size":2,"committed":true,"aborted":true,"visible_ns":7}`))
	f.Add([]byte(` { "id" : 01 , "epoch":-0 } `))
	f.Fuzz(func(t *testing.T, line []byte) {
		if msg := sameAsJSON(line); msg != "" {
			t.Fatalf("line %q: %s", line, msg)
		}
	})
}
