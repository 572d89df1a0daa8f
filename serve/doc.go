// Package serve runs the reference engine as a Kafka-protocol broker, so
// any Kafka client (franz-go, librdkafka, the Java clients and Kafka's
// tools) drives it: `sharebench serve` is this package behind a flag set,
// and a Go test embeds it as it would franz-go's kfake (see Example): an
// engine, a server on an ephemeral loopback port, any client.
//
//	e, _ := engine.New()
//	s, err := serve.New(e, serve.WithListen("127.0.0.1:9092"))
//	if err != nil { ... }
//	go s.Serve()
//	defer s.Close()
//
// The server is one broker (node id 0) that names itself the leader of
// every partition and the coordinator of every group and transactional id.
// Requests are decoded and encoded with kmsg; each API lives in its own
// file named by its key (00_produce.go, 78_share_fetch.go, ...), whose
// opening comment lists the versions it serves and what it maps onto in the
// engine. ApiVersions advertises exactly those versions; a request of any
// other key or version closes its connection (ApiVersions answers
// UNSUPPORTED_VERSION, as Kafka does), so a client never gets a silent
// wrong answer.
//
// The KIP-1289 draft's TxnShareAcknowledge is served in the shape
// WithTxnShareAck selects (key 93 or key 95, see internal/txnshareack), and
// only that key is advertised.
//
// What the server keeps itself rather than in the engine: the classic
// group protocol's membership (JoinGroup/SyncGroup generations; offsets go
// to the engine), share sessions (the partitions a member fetches and the
// connection that owns them: closing the session or the connection makes
// the engine member leave, which releases what it held without counting a
// delivery, and the next request joins a fresh engine member), the wire
// producer epoch of a transactional id (the engine bumps its own epoch at
// every commit; the client's moves with EndTxn v5 under transaction.version
// 2 and stays the one InitProducerId gave under 1), and idempotent
// producers' sequence numbers, so a retried batch is answered with its
// first offset instead of being appended twice.
//
// Control (control.go) applies engine-side faults while the server runs,
// through the loopback admin endpoint (NewAdmin) or the serve command's
// signals.
//
// Limits: WithMaxConns caps open connections (later ones are closed at
// once), WithMaxRequestBytes caps a request frame (a larger one closes the
// connection before its body is read). A malformed frame closes its
// connection; a handler that panics closes its connection and is logged;
// the engine is never left half-changed by either, since every engine call
// is all-or-nothing. WithIdleTimeout and WithPartialFrameTimeout close idle
// connections and frames that stop arriving, freeing their slots;
// WithMaxPartitionsPerTopic and WithMaxPartitions refuse topics past the
// partition caps before the engine allocates (limits.go).
//
// Security: WithSASLUser or WithSASLUsersFile make clients authenticate
// (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; sasl.go) before any request but
// ApiVersions, WithTLS serves TLS, optionally verifying client
// certificates (tls.go), and WithAdvertise sets the address Metadata
// names, which a wildcard listen address open to remote clients needs.
package serve
