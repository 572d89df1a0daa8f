// This file holds the cluster id by which sharebench serve names itself.

package txnshareack

// ClusterID is the cluster id sharebench serve reports (Metadata,
// DescribeCluster). It lives beside the TxnShareAcknowledge messages
// because it is the other piece of serve's wire vocabulary that clients
// need: the Kafka target tells serve from a real cluster by it without
// importing the server.
const ClusterID = "sharebench-serve"
