// This file runs the topic-config scripts under testdata/topicconfigs/
// against an in-process serve over a durable engine, through kadm: each a
// list of admin calls with named arguments and what each must print.
// Rewrite the expected output from the implementation with
//
//	go test ./serve/ -run TestTopicConfigScripts -rewrite
//
// and read the diff: every change is a change of behaviour.
//
// Commands (a config list is the input, one name=value a line; a value
// "<null>" is a null value):
//
//	create topic=T [partitions=N] [validate-only]  CreateTopics -> ok and
//	                                   the answered configs, or the error
//	describe topic=T                   DescribeConfigs -> each config with
//	                                   its source, or the error
//	describe-v0 topic=T                DescribeConfigs v0 -> each config
//	                                   with IsDefault
//	alter topic=T [validate-only]      IncrementalAlterConfigs; input
//	                                   lines "set N=V", "delete N",
//	                                   "append N=V", "subtract N=V"
//	replace topic=T [validate-only]    AlterConfigs with the input configs
//	delete-topic topic=T               DeleteTopics
//	restart                            closes the server and the engine
//	                                   and opens the data directory again

package serve_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/sharebench/sharebench/serve"
)

func TestTopicConfigScripts(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "topicconfigs", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts under testdata/topicconfigs (%v)", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, _, stop := durableServe(t, dir)
			ad, _ := adm(t, s)
			cl := describeV0Client(t, s)
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				if d.Cmd == "restart" {
					stop()
					s, _, stop = durableServe(t, dir)
					ad, _ = adm(t, s)
					cl = describeV0Client(t, s)
					return "ok"
				}
				return runTopicConfigCmd(t, d, ad, cl)
			})
		})
	}
}

// runTopicConfigCmd runs one command; cl sends DescribeConfigs at v0.
func runTopicConfigCmd(t *testing.T, d *datadriven.TestData, ad *kadm.Client, cl *kgo.Client) string {
	c := ctx(t)
	var topic string
	d.ScanArgs(t, "topic", &topic)
	validateOnly := d.HasArg("validate-only")
	switch d.Cmd {
	case "create":
		partitions := 1
		if d.HasArg("partitions") {
			d.ScanArgs(t, "partitions", &partitions)
		}
		configs := map[string]*string{}
		for _, kv := range scriptConfigs(t, d) {
			configs[kv.Name] = kv.Value
		}
		create := ad.CreateTopic
		if validateOnly {
			create = func(cc kadmCtx, p int32, rf int16, cf map[string]*string, topic string) (kadm.CreateTopicResponse, error) {
				rs, err := ad.ValidateCreateTopics(cc, p, rf, cf, topic)
				if err != nil {
					return kadm.CreateTopicResponse{}, err
				}
				return rs[topic], nil
			}
		}
		r, err := create(c, int32(partitions), 1, configs, topic)
		if err != nil && r.Err == nil {
			t.Fatalf("%s: CreateTopics: %v", d.Pos, err)
		}
		if r.Err != nil {
			return errLine(r.Err, r.ErrMessage)
		}
		var b strings.Builder
		b.WriteString("ok\n")
		for _, name := range sortedKeys(r.Configs) {
			cf := r.Configs[name]
			fmt.Fprintf(&b, "%s=%s %s\n", name, cf.MaybeValue(), cf.Source)
		}
		return b.String()
	case "describe":
		rcs, err := ad.DescribeTopicConfigs(c, topic)
		if err != nil {
			t.Fatalf("%s: DescribeConfigs: %v", d.Pos, err)
		}
		rc := rcs[0]
		if rc.Err != nil {
			return errLine(rc.Err, rc.ErrMessage)
		}
		var b strings.Builder
		for _, cf := range rc.Configs {
			fmt.Fprintf(&b, "%s=%s %s\n", cf.Key, cf.MaybeValue(), cf.Source)
		}
		return b.String()
	case "describe-v0":
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Version = 0
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
		req.Resources = append(req.Resources, r)
		resp, err := req.RequestWith(c, cl)
		if err != nil {
			t.Fatalf("%s: DescribeConfigs v0: %v", d.Pos, err)
		}
		if resp.Version != 0 {
			t.Fatalf("%s: DescribeConfigs answered at v%d, want v0", d.Pos, resp.Version)
		}
		var b strings.Builder
		for _, cf := range resp.Resources[0].Configs {
			fmt.Fprintf(&b, "%s=%s is-default=%v read-only=%v\n", cf.Name, *cf.Value, cf.IsDefault, cf.ReadOnly)
		}
		return b.String()
	case "alter", "replace":
		var ops []kadm.AlterConfig
		if d.Cmd == "replace" {
			ops = scriptConfigs(t, d)
		} else {
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				verb, arg, _ := strings.Cut(line, " ")
				op := map[string]kadm.IncrementalOp{"set": kadm.SetConfig, "delete": kadm.DeleteConfig, "append": kadm.AppendConfig, "subtract": kadm.SubtractConfig}
				o, ok := op[verb]
				if !ok {
					d.Fatalf(t, "alter: unknown operation %q (set, delete, append, subtract)", verb)
				}
				name, v, hasValue := strings.Cut(arg, "=")
				ac := kadm.AlterConfig{Op: o, Name: name}
				if hasValue {
					ac.Value = kadm.StringPtr(v)
				}
				ops = append(ops, ac)
			}
		}
		call := map[[2]bool]func(kadmCtx, []kadm.AlterConfig, ...string) (kadm.AlterConfigsResponses, error){
			{false, false}: ad.AlterTopicConfigs, {false, true}: ad.ValidateAlterTopicConfigs,
			{true, false}: ad.AlterTopicConfigsState, {true, true}: ad.ValidateAlterTopicConfigsState,
		}[[2]bool{d.Cmd == "replace", validateOnly}]
		rs, err := call(c, ops, topic)
		if err != nil {
			t.Fatalf("%s: %s: %v", d.Pos, d.Cmd, err)
		}
		if rs[0].Err != nil {
			return errLine(rs[0].Err, rs[0].ErrMessage)
		}
		return "ok"
	case "delete-topic":
		rs, err := ad.DeleteTopics(c, topic)
		if err != nil {
			t.Fatalf("%s: DeleteTopics: %v", d.Pos, err)
		}
		if r := rs[topic]; r.Err != nil {
			return errLine(r.Err, r.ErrMessage)
		}
		return "ok"
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// describeV0Client is a client that sends DescribeConfigs at v0 only,
// whose answer carries IsDefault rather than a config's source.
func describeV0Client(t *testing.T, s *serve.Server) *kgo.Client {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(int16(kmsg.DescribeConfigs), 0)
	return client(t, s, kgo.MaxVersions(vs))
}

// kadmCtx is kadm's context parameter, named for the call tables above.
type kadmCtx = context.Context

// scriptConfigs reads the input's name=value lines.
func scriptConfigs(t *testing.T, d *datadriven.TestData) []kadm.AlterConfig {
	var out []kadm.AlterConfig
	for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		if line == "" {
			continue
		}
		name, v, ok := strings.Cut(line, "=")
		if !ok {
			d.Fatalf(t, "config line %q is not name=value", line)
		}
		ac := kadm.AlterConfig{Name: name, Value: kadm.StringPtr(v)}
		if v == "<null>" {
			ac.Value = nil
		}
		out = append(out, ac)
	}
	return out
}

func errLine(err error, message string) string {
	var ke *kerr.Error
	name := err.Error()
	if errors.As(err, &ke) {
		name = ke.Message
	}
	return name + ": " + message
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
