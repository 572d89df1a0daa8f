// This file holds the verifier's benchmarks. BenchmarkVerify feeds N inputs
// and N outputs (-verify.n, 1e6 by default) and reports the heap the
// verifier holds per input; BenchmarkVerify10M does the same at ten million,
// the size the package documentation promises fits under 1 GiB.
//
// Extrapolation: the verifier holds fixed-size records (24 bytes per input
// id, 48 per output, in chunks of 32768), so its heap grows linearly with
// the ledger; bytes/input measured at 1e6 times 1e7 predicts the 10M heap
// within a chunk's rounding, plus 4 bytes per transactional output that
// Finish allocates to sort transactions. BenchmarkVerify logs that
// prediction; BenchmarkVerify10M measures it.

package verify_test

import (
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sharebench/sharebench/loadgen/verify"
	"github.com/sharebench/sharebench/vocab"
)

var benchN = flag.Int("verify.n", 1_000_000, "inputs (and as many outputs) BenchmarkVerify feeds")

func BenchmarkVerify(b *testing.B) {
	perInput := benchVerify(b, *benchN)
	b.Logf("extrapolated to 10M inputs and 10M outputs: %.0f MiB held while feeding (+%d MiB sort index in Finish)",
		perInput*1e7/(1<<20), 4*10_000_000>>20)
}

// BenchmarkVerify10M measures the 10M claim. It needs about 1 GiB; run it
// with -bench Verify10M -benchtime 1x.
func BenchmarkVerify10M(b *testing.B) {
	benchVerify(b, 10_000_000)
}

// benchTxn is the transaction size of the generated outputs.
const benchTxn = 100

// benchInput and benchOutput generate a clean transactional run: eight
// workers, transactions of benchTxn outputs, six partitions.
func benchInput(id uint64) verify.Input {
	return verify.Input{ID: id, Partition: int32(id % 6), Offset: int64(id / 6), IntendedNs: int64(id) * 1000,
		FinalState: vocab.StateAcknowledged, DeliveryCount: 1}
}

func benchOutput(id uint64) verify.Output {
	txn := int64((id - 1) / benchTxn)
	return verify.Output{InputID: id, Partition: int32(id % 6), Offset: int64(id / 6),
		TransactionalID: workerNames[txn%8], Epoch: 1, TxnSeq: txn, TxnSize: benchTxn,
		Committed: true, VisibleNs: int64(id)*1000 + 5e6}
}

var workerNames = func() []string {
	var s []string
	for i := range 8 {
		s = append(s, fmt.Sprintf("sharebench-worker-%d", i))
	}
	return s
}()

// benchVerify runs the benchmark for n inputs and returns bytes per input.
func benchVerify(b *testing.B, n int) float64 {
	var held, perInput float64
	var m0, m1 runtime.MemStats
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&m0)
		b.StartTimer()

		v := verify.New("transactional", verify.Options{DeliveryLimit: 5})
		for id := uint64(1); id <= uint64(n); id++ {
			v.AddInput(benchInput(id))
		}
		for id := uint64(1); id <= uint64(n); id++ {
			v.AddOutput(benchOutput(id))
		}

		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		held = float64(int64(m1.HeapAlloc) - int64(m0.HeapAlloc))
		perInput = held / float64(n)
		b.StartTimer()

		res := v.Finish()
		if !res.Pass || res.Inputs != int64(n) || len(res.Counts) != 0 {
			b.Fatalf("clean run did not pass: %+v", res)
		}
	}
	var m2 runtime.MemStats
	runtime.ReadMemStats(&m2)
	b.ReportMetric(perInput, "bytes/input")
	b.ReportMetric(held/(1<<20), "held-MiB")
	// Sys is what the process took from the OS so far: an upper bound of
	// the peak footprint, Finish's sort index and GC headroom included.
	b.ReportMetric(float64(m2.Sys)/(1<<20), "sys-MiB")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "inputs/s")
	return perInput
}

// BenchmarkVerifyDir measures reading ledgers from JSON lines (200k inputs
// and outputs) and verifying them.
func BenchmarkVerifyDir(b *testing.B) {
	const n = 200_000
	dir := b.TempDir()
	ins := make([]verify.Input, n)
	outs := make([]verify.Output, n)
	for i := range n {
		ins[i], outs[i] = benchInput(uint64(i+1)), benchOutput(uint64(i+1))
	}
	if err := verify.WriteLedgers(dir, ins, outs); err != nil {
		b.Fatal(err)
	}
	ins, outs = nil, nil
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := verify.VerifyDir("transactional", filepath.Join(dir), verify.Options{DeliveryLimit: 5})
		if err != nil || !res.Pass {
			b.Fatalf("VerifyDir = %+v, %v", res, err)
		}
	}
	b.ReportMetric(float64(2*n)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
