// Package txnshareack holds the request and response types of the KIP-1289
// draft's TxnShareAcknowledge API, which kmsg does not know, in both shapes
// the draft has had:
//
//   - key 93, version 0 (Key93): one acknowledge type per batch;
//   - key 95, version 0 (Key95): per-offset acknowledge types, where a
//     single value covers the whole range, and a per-partition error
//     message in the response.
//
// Both are flexible (compact encodings, tagged fields), carry the
// transactional id, producer id and epoch, the share group id, the member id
// and member epoch (for fencing), and name topics by topic id. Request and
// Response satisfy kmsg.Request and kmsg.Response, so the types travel
// through any code that speaks kmsg; their Key says which shape they are.
//
//	req := txnshareack.NewRequest(txnshareack.Key95)
//	req.TransactionalID = &id
//	...
//	b := req.AppendTo(nil)
//
// ClusterID, the cluster id serve reports, is here for the same reason:
// it is serve's wire vocabulary, which clients need without the server.
package txnshareack
