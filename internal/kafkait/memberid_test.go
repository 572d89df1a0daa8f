// This file checks serve's ShareGroupHeartbeat validation against the real
// broker's: the same invalid heartbeats go to both, and both answer the
// same error code.

package kafkait

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestShareHeartbeatValidationMatchesKafka: a blank member id (joining,
// heartbeating, leaving), an epoch below -1 and a join without topics get
// the real broker's code from serve too, and a 22-character UUID member id
// joins both, as does one of 36 characters; an empty one or one of 37 is
// refused by both without a message, at any epoch, a blank one with one.
func TestShareHeartbeatValidationMatchesKafka(t *testing.T) {
	b := brokers(t)
	s, e := startServe(t)
	ctx := context.Background()
	topic := "hb-validation-" + seedFor(t.Name())
	if err := e.CreateTopic(topic, 1); err != nil {
		t.Fatal(err)
	}
	clients := map[string]*kgo.Client{}
	for name, addr := range map[string]string{"kafka": b, "serve": s.Addr()} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		clients[name] = cl
	}
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, 1, 1
	create.Topics = append(create.Topics, ct)
	if _, err := create.RequestWith(ctx, clients["kafka"]); err != nil {
		t.Fatal(err)
	}
	group := "hb-validation-" + seedFor(t.Name())
	for _, tc := range []struct {
		name   string
		member string
		epoch  int32
		topics []string
	}{
		{"empty member id joining", "", 0, []string{topic}},
		{"blank member id joining", "  ", 0, []string{topic}},
		{"empty member id heartbeating", "", 1, nil},
		{"empty member id leaving", "", -1, nil},
		{"epoch below -1", "AAAAAAAAQACAAAAAAAAAAA", -2, nil},
		{"join without topics", "AAAAAAAAQACAAAAAAAAAAA", 0, []string{}},
		{"uuid member id joining", "q2mR4hT0QcOWbCgkW3eCEw", 0, []string{topic}},
		{"long member id joining", "a-member-id-longer-than-the-thirty-six-characters-of-a-uuid", 0, []string{topic}},
		{"36-character member id joining", "abcdefghijklmnopqrstuvwxyz0123456789", 0, []string{topic}},
		{"37-character member id joining", "abcdefghijklmnopqrstuvwxyz0123456789a", 0, []string{topic}},
		{"long member id heartbeating", "abcdefghijklmnopqrstuvwxyz0123456789abc", 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			codes, msgs := map[string]int16{}, map[string]string{}
			for name, cl := range clients {
				req := kmsg.NewPtrShareGroupHeartbeatRequest()
				req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = group, tc.member, tc.epoch, tc.topics
				// A fresh broker's group coordinator may still be
				// loading: ask again until it answers.
				var resp *kmsg.ShareGroupHeartbeatResponse
				var err error
				for start := time.Now(); ; {
					resp, err = req.RequestWith(ctx, cl)
					if err == nil {
						err = kerr.ErrorForCode(resp.ErrorCode)
					}
					if !errors.Is(err, kerr.CoordinatorNotAvailable) && !errors.Is(err, kerr.CoordinatorLoadInProgress) && !errors.Is(err, kerr.NotCoordinator) || time.Since(start) > time.Minute { // wallclock: a give-up bound on retrying a loading coordinator; what is asserted is the answer, not the time
						break
					}
					time.Sleep(200 * time.Millisecond)
				}
				if resp == nil {
					t.Fatalf("%s: %v", name, err)
				}
				codes[name] = resp.ErrorCode
				if resp.ErrorMessage != nil {
					msgs[name] = *resp.ErrorMessage
				}
			}
			if codes["kafka"] != codes["serve"] {
				t.Errorf("Kafka answers %v (%q), serve %v (%q)", kerr.ErrorForCode(codes["kafka"]), msgs["kafka"], kerr.ErrorForCode(codes["serve"]), msgs["serve"])
			}
			if (msgs["kafka"] == "") != (msgs["serve"] == "") {
				t.Errorf("Kafka's message %q, serve's %q: one gives a message, the other none", msgs["kafka"], msgs["serve"])
			}
			t.Logf("both answer %d (%v); Kafka's message %q, serve's %q", codes["kafka"], kerr.ErrorForCode(codes["kafka"]), msgs["kafka"], msgs["serve"])
		})
	}
}
