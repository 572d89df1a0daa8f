// Tests of New, Options, Info, Supports, Setup and Inspect.

package kafkatarget

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sharebench/sharebench/loadgen/targets"
	"github.com/sharebench/sharebench/vocab"
)

func TestUnreachableBrokers(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now

	_, err = New(context.Background(), Options{Brokers: []string{addr}, PingTimeout: 2 * time.Second})
	if err == nil {
		t.Fatal("New with a closed port: got nil error")
	}
	msg := err.Error()
	wantPrefix := "kafka: cannot reach brokers " + addr + ": "
	wantSuffix := "; check the broker addresses and that the cluster is up (or give none to use an embedded kfake cluster)"
	if !strings.HasPrefix(msg, wantPrefix) || !strings.HasSuffix(msg, wantSuffix) || strings.Count(msg, "\n") > 0 {
		t.Fatalf("error:\n got %q\nwant %q + cause + %q", msg, wantPrefix, wantSuffix)
	}
	if cause := strings.TrimSuffix(strings.TrimPrefix(msg, wantPrefix), wantSuffix); cause == "" {
		t.Fatalf("error %q names no cause", msg)
	}
	t.Logf("error: %v", err)
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts Options
		want string // substring of the error; "" for none
	}{
		{"embedded", Options{}, ""},
		{"comma separated brokers", Options{Brokers: []string{"a:1,b:2"}}, ""},
		{"bad mechanism", Options{Brokers: []string{"a:1"}, SASLMechanism: "gssapi", SASLUser: "u"}, `unknown SASL mechanism "gssapi"`},
		{"mechanism without user", Options{Brokers: []string{"a:1"}, SASLMechanism: "PLAIN"}, "needs a user"},
		{"password without mechanism", Options{Brokers: []string{"a:1"}, SASLPassword: "hunter2"}, "without a SASL mechanism"},
		{"cert without key", Options{Brokers: []string{"a:1"}, TLSCertFile: "c.pem"}, "both the certificate file and the key file"},
		{"sasl without brokers", Options{SASLMechanism: "plain", SASLUser: "u", SASLPassword: "hunter2"}, "need broker addresses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			err := o.validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("validate: got %v, want an error containing %q", err, tc.want)
			case err != nil && !strings.HasPrefix(err.Error(), "kafka: "):
				t.Fatalf("error %q lacks the kafka: prefix", err)
			case err != nil && strings.Contains(err.Error(), "hunter2"):
				t.Fatalf("error %q prints the password", err)
			}
		})
	}
	o := Options{Brokers: []string{"a:1"}, SASLMechanism: "scram-sha-512", SASLUser: "u", SASLPassword: "hunter2"}
	for _, s := range []string{o.String(), fmt.Sprintf("%v", o), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o)} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("formatted options %q print the password", s)
		}
	}
}

func TestEmbeddedInfo(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	info := tg.Info()
	if info.Target != "kafka" || !info.Embedded || !strings.HasPrefix(info.Brokers, "127.0.0.1:") {
		t.Errorf("Info = %+v, want target kafka, embedded, brokers on 127.0.0.1", info)
	}
	if !slices.Contains(info.Notes, "no brokers given: started an embedded kfake cluster") {
		t.Errorf("Info().Notes = %q, want the embedded-cluster note", info.Notes)
	}
	t.Logf("Info: %+v", info)
	if info.BrokerVersion == "" {
		t.Error("Info().BrokerVersion is empty")
	}
}

// TestSupports: what the Kafka target refuses, and how it says so (the
// modes every target runs are checked by targettest).
func TestSupports(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	ctx := ctxT(t)
	const want = "kafka: mode transactional needs the KIP-1289 transactional share-acknowledgement API, which this broker does not advertise; run the deferred mode for today's best effort, or use the engine target"
	err := tg.Supports(ctx, vocab.Transactional)
	if !errors.Is(err, targets.ErrUnsupported) {
		t.Fatalf("Supports(transactional) = %v, want an error wrapping ErrUnsupported", err)
	}
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Supports(transactional):\n got %q\nwant prefix %q", err, want)
	}
	cfg := testConfig(t, 1)
	setup(t, tg, cfg)
	if _, err := tg.NewWorker(ctx, cfg, vocab.Transactional, 0); !errors.Is(err, targets.ErrUnsupported) {
		t.Errorf("NewWorker(transactional) = %v, want an error wrapping ErrUnsupported", err)
	}
	if err := tg.Supports(ctx, "bogus"); err == nil || errors.Is(err, targets.ErrUnsupported) {
		t.Errorf("Supports(bogus) = %v, want an unknown-mode error", err)
	}
}

func TestSupportsWithoutShareGroups(t *testing.T) {
	t.Parallel()
	resp := kmsg.NewPtrApiVersionsResponse()
	for _, k := range []kmsg.Key{kmsg.Produce, kmsg.Fetch, kmsg.InitProducerID, kmsg.TxnOffsetCommit} {
		ak := kmsg.NewApiVersionsResponseApiKey()
		ak.ApiKey = int16(k)
		resp.ApiKeys = append(resp.ApiKeys, ak)
	}
	for _, m := range []vocab.Mode{vocab.Implicit, vocab.Explicit, vocab.Deferred, vocab.Transactional} {
		if err := supports(resp, m); !errors.Is(err, targets.ErrUnsupported) {
			t.Errorf("supports(%s) on a broker without share groups = %v, want ErrUnsupported", m, err)
		}
	}
	if err := supports(resp, vocab.ClassicEOS); err != nil {
		t.Errorf("supports(classic-eos) = %v, want nil", err)
	}
}

func TestSetupCreatesTopicsAndGroupConfig(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	cfg := testConfig(t, 3)
	cfg.OutputPartitions = 2
	setup(t, tg, cfg)
	ctx := ctxT(t)

	details, err := tg.adm.ListTopics(ctx, cfg.InputTopic, cfg.OutputTopic)
	if err != nil {
		t.Fatalf("ListTopics: %v", err)
	}
	for topic, want := range map[string]int{cfg.InputTopic: 3, cfg.OutputTopic: 2} {
		if got := len(details[topic].Partitions); got != want || details[topic].Err != nil {
			t.Errorf("topic %s: %d partitions (err %v), want %d", topic, got, details[topic].Err, want)
		}
	}

	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = cfg.Group
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, tg.admin)
	if err != nil {
		t.Fatalf("DescribeConfigs: %v", err)
	}
	got := make(map[string]string)
	for _, r := range resp.Resources {
		for _, c := range r.Configs {
			if c.Value != nil {
				got[c.Name] = *c.Value
			}
		}
	}
	for k, want := range map[string]string{
		"share.auto.offset.reset":       "earliest",
		"share.record.lock.duration.ms": "1000",
		"share.delivery.count.limit":    "10",
	} {
		if got[k] != want {
			t.Errorf("group config %s = %q, want %q", k, got[k], want)
		}
	}

	// Setting up again (same names) is not an error.
	setup(t, tg, cfg)

	if err := tg.Setup(ctx, targets.Config{Group: "g"}); err == nil {
		t.Error("Setup without an input topic: got nil error")
	}
}

func TestInspectBeforeConsuming(t *testing.T) {
	t.Parallel()
	tg := newEmbedded(t)
	cfg := testConfig(t, 2)
	setup(t, tg, cfg)
	st, err := tg.Inspect(ctxT(t), cfg)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if len(st.SPSO) != 0 || len(st.Records) != 0 {
		t.Errorf("Inspect of an unused group = %+v, want empty", st)
	}
}

func TestCloseClosesHandedOutClients(t *testing.T) {
	t.Parallel()
	tg, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, 1)
	setup(t, tg, cfg)
	ctx := ctxT(t)
	if _, err := tg.NewProducer(ctx, cfg, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.NewWorker(ctx, cfg, vocab.Explicit, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.NewReader(ctx, cfg, cfg.OutputTopic, true); err != nil {
		t.Fatal(err)
	}
	if err := tg.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := tg.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := tg.NewProducer(ctx, cfg, 1); err == nil {
		t.Error("NewProducer after Close: got nil error")
	}
}
