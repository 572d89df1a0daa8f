// This file holds what makes an OpenMessaging Benchmark workload file run
// unmodified: ${VAR:-default} substitutions, free-text names, and OMB's
// fields, translated where sharebench has an equivalent and listed once as
// ignored where it has none.

package workloads

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// ombIgnored are OMB fields with no sharebench equivalent, with why.
var ombIgnored = map[string]string{
	"subscriptionsPerTopic":     "one share group per mode",
	"payloadFile":               "payloads are generated, messageSize bytes each",
	"useRandomizedPayloads":     "payloads are generated",
	"randomBytesRatio":          "payloads are generated",
	"randomizedPayloadPoolSize": "payloads are generated",
	"keyDistributor":            "input records carry no keys",
	"consumerBacklogSizeGB":     "no backlog phase",
	"backlogDrainRatio":         "no backlog phase",
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

// omb decodes a top-level OMB field into s, if key is one, and reports
// whether it was.
func (d *decoder) omb(k, val *yaml.Node, s *Spec) bool {
	key := k.Value
	if why, ok := ombIgnored[key]; ok {
		if _, dup := d.lines[key]; !dup {
			d.lines[key] = k.Line
			d.ignored = append(d.ignored, fmt.Sprintf("%s (%s)", key, why))
		}
		d.isOMB = true
		return true
	}
	if key == "consumerPerSubscription" {
		d.lines[key] = k.Line
		d.isOMB = true
		var n int
		if err := d.decode(val, reflect.ValueOf(&n).Elem(), key); err != nil {
			d.add(err)
			return true
		}
		d.ombConsumers = &n
		return true
	}
	return false
}

// applyOMB translates the OMB fields decoded into s after the file's own.
func (d *decoder) applyOMB(s *Spec) {
	if d.ombConsumers != nil && !d.has("consumers") {
		s.Consumers = *d.ombConsumers
		d.lines["consumers"] = d.lines["consumerPerSubscription"]
		d.notes = append(d.notes, fmt.Sprintf("consumerPerSubscription %d is translated to consumers %d (workers per mode)", s.Consumers, s.Consumers))
	}
	if d.isOMB && !d.has("warmupDuration") && !d.has("warmupDurationMinutes") {
		s.WarmupMinutes, s.WarmupLength = ombWarmupMinutes, 0
		d.notes = append(d.notes, fmt.Sprintf("no warm-up given: OMB's default of %d minute applies (set warmupDurationMinutes to change it)", ombWarmupMinutes))
	}
	if len(d.ignored) > 0 {
		d.notes = append(d.notes, "ignored OpenMessaging Benchmark fields with no sharebench equivalent: "+strings.Join(d.ignored, ", "))
	}
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
