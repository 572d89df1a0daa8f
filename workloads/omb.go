// This file holds what makes an OpenMessaging Benchmark workload file run
// unmodified: ${VAR:-default} substitutions, free-text names, and OMB's
// fields, each translated or refused with the reason (docs/omb.md has the
// table).

package workloads

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"unicode"
)

// ombOnly are the fields only an OpenMessaging Benchmark file gives: one of
// them makes a file an OMB file, which takes OMB's default warm-up.
var ombOnly = []string{
	"consumerPerSubscription", "subscriptionsPerTopic", "payloadFile", "useRandomizedPayloads",
	"randomBytesRatio", "randomizedPayloadPoolSize", "keyDistributor", "consumerBacklogSizeGB", "backlogDrainRatio",
}

// ombWarmupMinutes is OMB's default warm-up (Workload.warmupDurationMinutes),
// used for an OMB file that gives none.
const ombWarmupMinutes = 1

// varRE matches ${NAME} and ${NAME:-default}.
var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandVars replaces ${NAME} with the environment variable NAME, and
// ${NAME:-default} with NAME or, when NAME is unset or empty, default, as
// a shell does, on every line but comment lines. A ${NAME} without a
// default whose variable is unset is an error at its line.
func expandVars(file string, data []byte, lookup func(string) (string, bool)) ([]byte, []*Error) {
	var errs []*Error
	lines := strings.SplitAfter(string(data), "\n")
	for i, line := range lines {
		// A comment line is not expanded: a ${NAME} there is text.
		if !strings.Contains(line, "${") || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		lines[i] = varRE.ReplaceAllStringFunc(line, func(m string) string {
			sub := varRE.FindStringSubmatch(m)
			v, ok := lookup(sub[1])
			if ok && v != "" {
				return v
			}
			if sub[2] != "" {
				return sub[3]
			}
			errs = append(errs, &Error{File: file, Line: i + 1, Msg: fmt.Sprintf(
				"%s: the environment variable %s is not set and there is no default; set it, or write ${%s:-VALUE}", m, sub[1], sub[1])})
			return m
		})
	}
	return []byte(strings.Join(lines, "")), errs
}

func osLookup(name string) (string, bool) { return os.LookupEnv(name) }

// omb decodes a top-level OMB field into s, if key is one that has no
// field of Spec of its own, and reports whether it was.
func (d *decoder) omb(k, val *node, s *Spec) bool {
	if k.value != "consumerPerSubscription" {
		return false
	}
	d.lines[k.value] = k.line
	var n int
	if err := d.decode(val, reflect.ValueOf(&n).Elem(), k.value); err != nil {
		d.add(err)
		return true
	}
	d.ombConsumers = &n
	return true
}

// applyOMB translates the OMB fields decoded into s after the file's own.
func (d *decoder) applyOMB(s *Spec) {
	for _, f := range ombOnly {
		d.isOMB = d.isOMB || d.has(f)
	}
	if d.ombConsumers != nil && !d.has("consumers") {
		s.Consumers = *d.ombConsumers
		d.lines["consumers"] = d.lines["consumerPerSubscription"]
		d.notes = append(d.notes, fmt.Sprintf("consumerPerSubscription %d is translated to consumers %d (workers per mode)", s.Consumers, s.Consumers))
	}
	if d.isOMB && !d.has("warmupDuration") && !d.has("warmupDurationMinutes") {
		s.WarmupMinutes, s.WarmupLength = ombWarmupMinutes, 0
		d.notes = append(d.notes, fmt.Sprintf("no warm-up given: OMB's default of %d minute applies (set warmupDurationMinutes to change it)", ombWarmupMinutes))
	}
	if s.PayloadFile != "" && !d.failed("payloadFile") {
		d.payloadFile(s)
	}
	if s.RandomizedPayloads {
		d.notes = append(d.notes, fmt.Sprintf("useRandomizedPayloads: %d payloads of %d bytes, %v of them random (from the run's seed), then zeros; the first %d bytes of each record carry sharebench's header",
			s.RandomizedPayloadPoolSize, s.MessageSizeBytes, s.RandomBytesRatio, minMessageSize))
	}
	if s.ConsumerBacklogSizeGB > 0 {
		d.notes = append(d.notes, fmt.Sprintf("consumerBacklogSizeGB %v: each mode's workers start once %d records (%v GiB of %d bytes) are produced, and the window opens once %v of that backlog is drained",
			s.ConsumerBacklogSizeGB, s.BacklogRecords(), s.ConsumerBacklogSizeGB, s.MessageSizeBytes, s.DrainRatio()))
	}
}

// payloadFile resolves s.PayloadFile and sets the message size to the
// file's. A relative path is looked up as OMB does, from the working
// directory, then where OMB's repository layout puts it beside the
// workload (workloads/NAME.yaml with payload/FILE: the parent of the
// file's directory), then in the file's own directory.
func (d *decoder) payloadFile(s *Spec) {
	line := d.lines["payloadFile"]
	path := s.PayloadFile
	if !filepath.IsAbs(path) {
		dir := filepath.Dir(d.file)
		for _, c := range []string{path, filepath.Join(dir, "..", path), filepath.Join(dir, path)} {
			if _, err := os.Stat(c); err == nil {
				path = c
				break
			}
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		d.add(&Error{File: d.file, Line: line, Field: "payloadFile", Msg: fmt.Sprintf(
			"%q cannot be read (looked in the working directory and beside the workload file): %v; give a path to the payload, relative to the working directory", s.PayloadFile, unwrapPath(err))})
		return
	}
	size := fi.Size()
	if fi.IsDir() || size < minMessageSize || size > maxMessageSize {
		d.add(&Error{File: d.file, Line: line, Field: "payloadFile", Msg: fmt.Sprintf(
			"%q is %d bytes; a payload is a file of %d to %d bytes", s.PayloadFile, size, minMessageSize, maxMessageSize)})
		return
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if int(size) != s.MessageSizeBytes {
		d.notes = append(d.notes, fmt.Sprintf("payloadFile %s is %d bytes: records are %d bytes, not messageSize %d (OMB sends the file too)", s.PayloadFile, size, size, s.MessageSizeBytes))
	}
	s.PayloadFile, s.MessageSizeBytes = path, int(size)
}

// freeTextName turns a free-text name (OMB's names read like
// "1 producer / 1 consumers on 1 topic") into a workload name: lower case,
// every run of other characters as one '-'. The text is kept as the
// description when the file has none. ok is false when name is not
// printable text, or nothing of it is left.
func freeTextName(name string) (slug string, ok bool) {
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return "", false
		}
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_'):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	slug = strings.TrimRight(b.String(), "-")
	if len(slug) > maxNameLen {
		slug = strings.TrimRight(slug[:maxNameLen], "-")
	}
	return slug, slug != "" && nameRE.MatchString(slug)
}
