// Package clientconf is sharebench's client conformance tier: clients this
// project did not write — Kafka 4.4's Java tools, librdkafka through
// confluent-kafka, kcat — run against sharebench serve and against a real
// Kafka 4.4 broker, each output checked, and the two servers' answers
// compared. It holds only tests and their testdata.
//
// The tier is off unless SHAREBENCH_CLIENTS=1; the Kafka column needs a
// broker in SHAREBENCH_KAFKA:
//
//	scripts/kafka/up    # one-node Kafka 4.4.0 on 127.0.0.1:9092
//	SHAREBENCH_CLIENTS=1 SHAREBENCH_KAFKA=127.0.0.1:9092 go test -count=1 -v -run TestClients ./internal/clientconf/
//	scripts/kafka/down
//
// It needs Java 17 and the jars scripts/kafka fetches, python3 with
// confluent-kafka 2.16.1 (pip install confluent-kafka==2.16.1) and kcat
// (apt-get install kcat). With SHAREBENCH_CLIENTS=1 a missing client fails
// its cases rather than skipping them. The tier prints the conformance
// table (client, operation, serve, Kafka 4.4, whether they agree); with
// -update it also writes it to docs/conformance.md.
package clientconf
