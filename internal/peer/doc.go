// Package peer holds the peer tools: produce-only and share-consume-only
// runs straight on franz-go against a Kafka cluster, measured the way
// Kafka's own ProducerPerformance and ShareConsumerPerformance measure and
// print, so one script (scripts/peer-bench.sh) can run both tools on the
// same broker, `sharebench serve` or a real one, and compare them line for
// line.
//
// The caller opens the cluster as a kafka target and runs one tool on it:
//
//	tgt, err := kafkatarget.New(ctx, kafkatarget.Options{Brokers: seeds, ClientID: "sharebench-peer"})
//	...
//	res, err := peer.Produce(ctx, tgt, peer.ProduceConfig{Topic: "t1", Records: 1_000_000, RecordBytes: 100, ...})
//	if err != nil { ... }       // nothing measured; errors.Is(err, peer.ErrConfig): a refused setting
//	res.WriteText(os.Stdout)    // the Kafka tool's own line(s), then sharebench's extras
//	err = res.Err()             // records that failed, once the result is out
//
// ShareConsume is the same for a share consumer. Results also encode as
// JSON with the field names the CLI's --format json documents.
package peer

import "errors"

// ErrConfig marks an error in what the caller asked for (a client setting
// franz-go refuses), as opposed to one the cluster returned.
var ErrConfig = errors.New("peer: bad configuration")

// configError is an error the caller's settings caused; its text is the
// cause's alone.
type configError struct{ error }

func (e configError) Unwrap() error      { return e.error }
func (configError) Is(target error) bool { return target == ErrConfig }
