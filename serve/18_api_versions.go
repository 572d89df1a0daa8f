// ApiVersions: v0-5.
//
// Lists every API in the server's table with the versions its handler
// serves (TxnShareAcknowledge only in the shape WithTxnShareAck selects),
// the share.version feature (share groups on) and the transaction.version
// feature WithTransactionVersion finalizes (KIP-890 part 2 at 2). A v5
// request (KIP-1242) may name the cluster and node the client means to
// reach: naming one without the other is INVALID_REQUEST, naming another
// cluster or node than this server REBOOTSTRAP_REQUIRED, as Kafka answers.
// A request of a version above 5 gets a v0 UNSUPPORTED_VERSION answer
// listing ApiVersions alone with the versions served (KIP-511), so the
// client retries at one of them, as Kafka does: a client that took a v0
// answer for the whole table would miss the finalized features, which
// only v3 and later carry.

package serve

import (
	"encoding/binary"
	"sort"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.ApiVersions), 0, 5, (*Server).handleApiVersions) }

func (s *Server) apiKeys() []kmsg.ApiVersionsResponseApiKey {
	keys := make([]kmsg.ApiVersionsResponseApiKey, 0, len(s.apis))
	for k, a := range s.apis {
		ak := kmsg.NewApiVersionsResponseApiKey()
		ak.ApiKey, ak.MinVersion, ak.MaxVersion = k, a.min, a.max
		keys = append(keys, ak)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].ApiKey < keys[j].ApiKey })
	return keys
}

func (s *Server) handleApiVersions(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 5 {
		switch named := req.ClusterID != nil; {
		case named != (req.NodeID != -1):
			resp.ErrorCode = kerr.InvalidRequest.Code
			return resp, nil
		case named && (*req.ClusterID != clusterID || req.NodeID != nodeID):
			resp.ErrorCode = kerr.RebootstrapRequired.Code
			return resp, nil
		}
	}
	resp.ApiKeys = s.apiKeys()
	if req.Version >= 3 {
		sf := kmsg.NewApiVersionsResponseSupportedFeature()
		sf.Name, sf.MinVersion, sf.MaxVersion = "share.version", 0, 1
		ff := kmsg.NewApiVersionsResponseFinalizedFeature()
		ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = "share.version", 1, 1
		resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		sf = kmsg.NewApiVersionsResponseSupportedFeature()
		sf.Name, sf.MinVersion, sf.MaxVersion = "transaction.version", 0, 2
		ff = kmsg.NewApiVersionsResponseFinalizedFeature()
		ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = "transaction.version", s.cfg.txnVersion, s.cfg.txnVersion
		resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		resp.FinalizedFeaturesEpoch = 1
	}
	return resp, nil
}

// apiVersionsUnsupported appends the v0 UNSUPPORTED_VERSION response
// frame, which lists the ApiVersions versions served and nothing else.
func (s *Server) apiVersionsUnsupported(dst []byte, corr int32) []byte {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	a := s.apis[int16(kmsg.ApiVersions)]
	ak := kmsg.NewApiVersionsResponseApiKey()
	ak.ApiKey, ak.MinVersion, ak.MaxVersion = int16(kmsg.ApiVersions), a.min, a.max
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{ak}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = kbin.AppendInt32(dst, corr)
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}
