// DescribeCluster: v0-1.
//
// The one broker, which is also the controller.

package serve

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(int16(kmsg.DescribeCluster), 0, 1, (*Server).handleDescribeCluster) }

func (s *Server) handleDescribeCluster(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterID = clusterID
	resp.ControllerID = nodeID
	b := kmsg.NewDescribeClusterResponseBroker()
	b.NodeID, b.Host, b.Port = nodeID, s.host, s.port
	resp.Brokers = append(resp.Brokers, b)
	return resp, nil
}
