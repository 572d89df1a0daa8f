// Package targettest is the conformance suite of targets.Target: the
// contract every target keeps (the interface's documented behaviour, as
// the load generator relies on it), written once and run against each
// target, the way kfake is the one Kafka a client's tests run against.
//
// A target's tests call Run with a function that opens a fresh target for
// one case and closes it when the case ends:
//
//	func TestConformance(t *testing.T) {
//		targettest.Run(t, func(t *testing.T) targets.Target {
//			tg, err := enginetarget.New(enginetarget.Options{})
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { tg.Close() })
//			return tg
//		})
//	}
//
// Each case is a parallel subtest with topic, group and transactional-id
// names of its own (unique per Run, so a real cluster that keeps them from
// run to run never mixes two runs), and deletes them at the end when the
// target can (a Teardown method). Its waits are bounded by Timeout, a
// safety net for a hung target and never an assertion about speed.
//
// The cases need the implicit, explicit, deferred and classic-eos modes;
// the transactional-mode contract (KIP-1289) is left to the targets that
// have it. Transaction markers are checked only on targets that implement
// targets.MarkerReader.
package targettest
