// This file tests ShareGroupHeartbeat's validation over the wire: what
// Kafka 4.4 refuses as INVALID_REQUEST (a member id empty, blank or over
// 36 characters, a blank group id, at any epoch; an epoch below -1; a join
// without topics) is refused so, before any group is touched, and a
// client-chosen UUID member id joins.

package serve_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestShareHeartbeatValidation(t *testing.T) {
	s, e := start(t)
	if err := e.CreateTopic("t", 1); err != nil {
		t.Fatal(err)
	}
	cl := client(t, s)
	cases := []struct {
		name   string
		group  string
		member string
		epoch  int32
		topics []string
		want   int16
	}{
		{"empty member id joining", "g", "", 0, []string{"t"}, kerr.InvalidRequest.Code},
		{"blank member id joining", "g", " \t", 0, []string{"t"}, kerr.InvalidRequest.Code},
		{"empty member id leaving", "g", "", -1, nil, kerr.InvalidRequest.Code},
		{"empty member id heartbeating", "g", "", 3, nil, kerr.InvalidRequest.Code},
		{"empty group id", "", "AAAAAAAAQACAAAAAAAAAAA", 0, []string{"t"}, kerr.InvalidRequest.Code},
		{"epoch below -1", "g", "AAAAAAAAQACAAAAAAAAAAA", -2, nil, kerr.InvalidRequest.Code},
		{"join without topics", "g", "AAAAAAAAQACAAAAAAAAAAA", 0, []string{}, kerr.InvalidRequest.Code},
		{"unknown member heartbeating", "g", "AAAAAAAAQACAAAAAAAAAAA", 1, nil, kerr.UnknownMemberID.Code},
		{"uuid member id joining", "g", "q2mR4hT0QcOWbCgkW3eCEw", 0, []string{"t"}, 0},
		{"36-character member id joining", "g", "abcdefghijklmnopqrstuvwxyz0123456789", 0, []string{"t"}, 0},
		{"37-character member id joining", "g", "abcdefghijklmnopqrstuvwxyz0123456789a", 0, []string{"t"}, kerr.InvalidRequest.Code},
		{"long member id heartbeating", "g", "abcdefghijklmnopqrstuvwxyz0123456789abc", 1, nil, kerr.InvalidRequest.Code},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := kmsg.NewPtrShareGroupHeartbeatRequest()
			req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = tc.group, tc.member, tc.epoch, tc.topics
			resp, err := req.RequestWith(ctx(t), cl)
			if err != nil {
				t.Fatal(err)
			}
			if resp.ErrorCode != tc.want {
				t.Fatalf("error code %d (%v), want %d (%v)", resp.ErrorCode, kerr.ErrorForCode(resp.ErrorCode), tc.want, kerr.ErrorForCode(tc.want))
			}
			if bare := tc.member == "" || len(tc.member) > 36; tc.want == kerr.InvalidRequest.Code && (resp.ErrorMessage == nil) != bare {
				t.Errorf("message %v; Kafka gives one for every invalid request but an empty or too long member id", resp.ErrorMessage)
			}
			if tc.want == 0 && (resp.MemberID == nil || *resp.MemberID != tc.member || resp.MemberEpoch < 1) {
				t.Errorf("joined as %v epoch %d, want %q with an epoch of at least 1", resp.MemberID, resp.MemberEpoch, tc.member)
			}
		})
	}
}
