package serve_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/serve"
)

// A topic created by a Metadata request is answered with the id of the
// incarnation just created, so a client producing by topic id (Produce
// v13, the Java producer's first send to a new topic) names a live topic.
func TestMetadataAutoCreateAnswersTheNewID(t *testing.T) {
	s, _ := start(t)
	cl := client(t, s)
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("created-by-metadata")
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("metadata with auto-creation: %+v", resp.Topics)
	}
	got, want := resp.Topics[0].TopicID, serve.TopicID(s, "created-by-metadata")
	if got == ([16]byte{}) || got != want {
		t.Fatalf("auto-created topic answered with id %x, the server holds %x", got, want)
	}
}
