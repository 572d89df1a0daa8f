// This file checks that SCHEMA.md's example parses and that the JSON form
// uses the schema's field names.

package workloads_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sharebench/sharebench/workloads"
)

func TestSchemaExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("SCHEMA.md has no ```yaml example")
	}
	s, err := workloads.Parse("SCHEMA.md example", []byte(example))
	if err != nil {
		t.Fatalf("the SCHEMA.md example does not parse: %v", err)
	}
	roundTrip(t, s)
}

func TestJSONFieldNames(t *testing.T) {
	t.Parallel()
	s, _ := workloads.Lookup("chaos")
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"name", "partitionsPerTopic", "messageSize", "producerRate", "testDuration",
		"warmupDuration", "lockDuration", "transaction", "modes", "faults", "processingTime"} {
		if _, ok := m[key]; !ok {
			t.Errorf("JSON of a spec lacks %q: %s", key, data)
		}
	}
	if _, ok := m["testDurationMinutes"]; ok {
		t.Errorf("JSON holds testDurationMinutes after Defaults folded it: %s", data)
	}
}
