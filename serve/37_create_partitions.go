// CreatePartitions: v0-3.
//
// Grows each topic in the engine (Engine.CreatePartitions), as Kafka does:
// only up, so a count not above the current one is INVALID_PARTITIONS; a
// topic named twice is INVALID_REQUEST; manual replica assignments are
// INVALID_REPLICA_ASSIGNMENT (one broker holds every partition). The new
// partitions are readable and writable, and in Metadata, as soon as the
// response is sent. ValidateOnly checks without growing.

package serve

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(int16(kmsg.CreatePartitions), 0, 3, (*Server).handleCreatePartitions) }

func (s *Server) handleCreatePartitions(_ *conn, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	named := map[string]int{}
	for _, t := range req.Topics {
		named[t.Topic]++
	}
	for _, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		var err error
		switch {
		case named[t.Topic] > 1:
			err = fmt.Errorf("%w: topic %q is named more than once in the request", kerr.InvalidRequest, t.Topic)
		case len(t.Assignment) > 0:
			err = fmt.Errorf("%w: sharebench serve is one broker and places new partitions itself; send no assignment", kerr.InvalidReplicaAssignment)
		default:
			err = s.e.CreatePartitions(t.Topic, t.Count, req.ValidateOnly)
		}
		rt.ErrorCode = errCode(err)
		rt.ErrorMessage = msg(err)
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
