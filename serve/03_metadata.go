// Metadata: v0-12.
//
// One broker (node 0, the listen address), the controller; every partition
// led by it with it as the only replica. Topics named and missing are
// created when auto-creation is on and the request allows it (v4+), else
// UNKNOWN_TOPIC_OR_PARTITION (or the error of a partition cap that refused
// the creation). Each topic incarnation has the random id the engine gave
// it at creation.

package serve

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/internal/txnshareack"
)

func init() { register(int16(kmsg.Metadata), 0, 12, (*Server).handleMetadata) }

// ClusterID is the cluster id the server reports (Metadata,
// DescribeCluster), by which a client can tell it is talking to
// sharebench serve. It is defined in txnshareack so that clients can
// know it without importing the server.
const ClusterID = txnshareack.ClusterID

const clusterID = ClusterID

func (s *Server) handleMetadata(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = nodeID, s.host, s.port
	resp.Brokers = append(resp.Brokers, b)
	cid := clusterID
	resp.ClusterID = &cid
	resp.ControllerID = nodeID

	var names []string
	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		names = s.e.Topics()
	}
	for _, t := range req.Topics {
		switch {
		case t.Topic != nil && *t.Topic != "":
			names = append(names, *t.Topic)
		default:
			name, ok := s.topicName(t.TopicID)
			if !ok {
				rt := kmsg.NewMetadataResponseTopic()
				rt.TopicID = t.TopicID
				rt.ErrorCode = kerr.UnknownTopicID.Code
				resp.Topics = append(resp.Topics, rt)
				continue
			}
			names = append(names, name)
		}
	}
	for _, name := range names {
		rt := kmsg.NewMetadataResponseTopic()
		n := name
		rt.Topic = &n
		parts, ok := s.partitions(name)
		var createErr error
		if !ok && !all && (req.Version < 4 || req.AllowAutoTopicCreation) {
			if np, err := s.ensureTopic(name); err == nil {
				parts, ok = np, true
			} else {
				createErr = err
			}
		}
		if !ok {
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			switch {
			case !validTopicName(name):
				rt.ErrorCode = kerr.InvalidTopicException.Code
			case isCapError(createErr):
				rt.ErrorCode = errCode(createErr)
			}
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		// The id is read once the topic exists: an auto-created topic's
		// incarnation gets its id when it is created.
		rt.TopicID = s.topicID(name)
		for p := int32(0); p < parts; p++ {
			rp := kmsg.NewMetadataResponseTopicPartition()
			rp.Partition, rp.Leader, rp.LeaderEpoch = p, nodeID, 0
			rp.Replicas, rp.ISR = []int32{nodeID}, []int32{nodeID}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
