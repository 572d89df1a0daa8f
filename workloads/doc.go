// Package workloads defines what a sharebench run does: the YAML workload
// schema, its parsing and validation, and a registry of built-in named
// workloads. Get a workload with Load (a built-in name such as "quick", or a
// path to a YAML file), or Parse bytes you already hold; both return a Spec
// with every default filled in and every setting checked, so the load
// generator can use it as is. Bad input gives an *Error naming the file,
// line, field, what is wrong and the fix, or Errors listing every problem of
// the file, one *Error each; the CLI detects them with errors.As.
//
// The field names follow the OpenMessaging Benchmark where one exists
// (partitionsPerTopic, messageSize, producerRate, testDurationMinutes, ...),
// and an OMB workload file runs unmodified: LoadWithNotes says how its other
// fields were translated, and a field sharebench cannot honour is refused
// with the reason (omb.go; docs/omb.md has the table). SCHEMA.md in this directory
// documents every field, its default and its range. Built-in workloads live as YAML files under builtin/ and register
// themselves at init; Register adds more, and a duplicate name panics.
//
// A Spec built in Go should start from New, which holds every default, or be
// passed through Defaults before Validate.
package workloads
