// Package kafkait is sharebench's integration tier against a real Apache
// Kafka broker. It holds only tests; they drive the real command line
// (cli.Main: `sharebench run --target kafka --brokers ...`) end to end and
// check the verifier's verdict in result.json.
//
// The tier is off unless SHAREBENCH_KAFKA names a broker:
//
//	scripts/kafka/up                     # one-node Kafka 4.4.0 on 127.0.0.1:9092
//	SHAREBENCH_KAFKA=127.0.0.1:9092 go test -count=1 -timeout 15m ./internal/kafkait/...
//	scripts/kafka/down
//
// Without SHAREBENCH_KAFKA every test skips and says how to enable it. With
// it set, an unreachable broker fails every test (CI sets it, so a broker
// that did not come up is a failure, never a silent skip).
//
// What runs (about 2 minutes on 2 cores; see docs/real-kafka.md):
//
//   - TestChaosClientFaults: the chaos workload's client-side faults (worker
//     crashes, abort ratio, slow processing, a stalled worker, a zombie
//     producer) in implicit, explicit, deferred and classic-eos; each passes
//     the verifier with only the anomalies its mode allows.
//   - TestConformance: the targets.Target conformance suite
//     (loadgen/targets/targettest) through the Kafka target, as the engine
//     target and kfake run it in their packages' tests.
//   - TestModes: a quick run of every mode the broker supports, verified.
//   - TestCompressedModes: the quick run of every supported mode once per
//     codec (--compression gzip, snappy, lz4, zstd), verified, and the
//     kept topics read back: the broker holds the input and output batches
//     in that codec.
//   - TestShareHeartbeatValidationMatchesKafka: the same invalid
//     ShareGroupHeartbeats (empty, blank, 37-character member ids, a bad
//     epoch, a join without topics) to the broker and to sharebench serve
//     (in process): both answer the same code, with or without a message.
//   - TestTransactionalFailsFast: --modes transactional stops before running
//     anything with the unsupported-broker message.
//   - TestBrokerRestart: the broker restarts mid-load through
//     --broker-control 'scripts/kafka/control {action}'; explicit and
//     classic-eos lose nothing committed. It restarts the broker, so it needs
//     the one scripts/kafka/up started (or SHAREBENCH_KAFKA_CONTROL, a
//     command with {action}; "off" skips it).
//   - TestThreeNodeChaos: the kafka-chaos built-in against three nodes
//     (scripts/kafka/up --nodes 3, SHAREBENCH_KAFKA_CLUSTER set to the list
//     it prints) in explicit, deferred and classic-eos, broker faults
//     through scripts/kafka/control: each fault starts within a second of
//     its schedule, each broker fault hits the broker its selector
//     resolved to, no mode is PASS with unjudged inputs, and no topic or
//     group of the run is left behind.
//   - TestSecureModes, TestSecureBrokerRestart, TestSecureFailsFast: against
//     a secured node (scripts/kafka/up --security sasl_ssl; set
//     SHAREBENCH_KAFKA_SECURE to the SASL_SSL address it prints and
//     SHAREBENCH_KAFKA_SECURE_DIR to its KAFKA_RUN_DIR): every mode over
//     PLAIN and SCRAM-SHA-512 with the private CA (JKS, PKCS12 and PEM
//     trust), a broker restart through scripts/kafka/control, and a wrong
//     password or an untrusted CA exiting 2 at once naming the property.
//   - TestJavaToolsAgainstServe: sharebench serve (in process) driven by
//     Kafka's Java tools from the jar cache: ProducerPerformance with and
//     without --transactional-id, ShareConsumerPerformance, a read_committed
//     ConsoleConsumer, kafka-share-groups --describe, kafka-transactions
//     list (through their main classes, scripts/kafka/run-class).
//   - TestJavaTopicAndProducerToolsAgainstServe: kafka-topics --create and
//     --describe against serve, and kafka-transactions describe-producers
//     on a partition written only by a transactional producer whose
//     transactions ended: it is listed, with no open transaction.
//   - TestServeBesideKafka: the same quick run against the real broker and
//     against serve (plus transactional there), both verified.
//   - TestStaleAcksBesideServe: raw ShareAcknowledge requests of records the
//     member no longer holds (its lock expired, another member acquired or
//     accepted them, it closed its share session) or holds on a share
//     session outside the group (it left the group with the session open)
//     against the real broker and against serve; both answer the codes
//     docs/design.md §3.2 records, alike, and apply the reject alike.
//
// Environment: SHAREBENCH_KAFKA (seed brokers, required to run),
// SHAREBENCH_KAFKA_CLUSTER (a three-node cluster's bootstrap list, for
// TestThreeNodeChaos), SHAREBENCH_KAFKA_SECURE and SHAREBENCH_KAFKA_SECURE_DIR
// (a secured node, for TestSecure*),
// SHAREBENCH_KAFKA_CONTROL (broker-control command for TestBrokerRestart,
// default this checkout's scripts/kafka/control).
package kafkait
