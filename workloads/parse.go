// This file holds Parse and Load: YAML in, a validated Spec out, and bad
// input reported as one *Error with its file, line and field.

package workloads

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// maxFileBytes bounds a workload file.
const maxFileBytes = 1 << 20

// Load returns the workload nameOrPath names: a registered workload first,
// else the YAML file at that path. Every failure is an *Error; an unknown
// name that is not a file lists the built-in names.
func Load(nameOrPath string) (*Spec, error) {
	if s, ok := Lookup(nameOrPath); ok {
		return s, nil
	}
	data, err := readFile(nameOrPath)
	if err != nil {
		return nil, err
	}
	return Parse(nameOrPath, data)
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &Error{File: path, err: err, Msg: fmt.Sprintf(
			"no built-in workload has that name and no file has that path; use one of %s, or the path of a YAML file",
			andList(Names()))}
	}
	if err != nil {
		return nil, &Error{File: path, err: err, Msg: fmt.Sprintf("cannot open the workload file: %v; check the path and its permissions", unwrapPath(err))}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, &Error{File: path, err: err, Msg: fmt.Sprintf("cannot read the workload file: %v; give the path of a YAML file", unwrapPath(err))}
	}
	return data, nil
}

// unwrapPath drops the path an *fs.PathError repeats, since the Error
// already names the file.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse decodes the YAML workload in data over the defaults of New, fills
// the derived fields and validates the result. file names the input in
// errors; the workload's name defaults to file's base name without its
// extension. Every failure is an *Error, or an Errors listing every
// problem of the file.
func Parse(file string, data []byte) (*Spec, error) {
	s, _, err := ParseWithNotes(file, data)
	return s, err
}

// LoadWithNotes is Load, also returning notes for the user: how the
// fields of an OpenMessaging Benchmark file were translated.
func LoadWithNotes(nameOrPath string) (*Spec, []string, error) {
	if s, ok := Lookup(nameOrPath); ok {
		return s, nil, nil
	}
	data, err := readFile(nameOrPath)
	if err != nil {
		return nil, nil, err
	}
	return ParseWithNotes(nameOrPath, data)
}

// ParseWithNotes is Parse, also returning notes (see LoadWithNotes). It
// reports every error of the file at once: ${VAR} substitutions, every
// field that does not decode, and every validation failure.
func ParseWithNotes(file string, data []byte) (*Spec, []string, error) {
	if len(data) > maxFileBytes {
		return nil, nil, &Error{File: file, Msg: fmt.Sprintf("is larger than %d bytes; a workload file is a few dozen lines", maxFileBytes)}
	}
	data, verrs := expandVars(file, data, osLookup)
	root, err := parseNode(file, data)
	if err != nil {
		return nil, nil, errorsOf(append(verrs, asError(err)))
	}
	d := &decoder{file: file, lines: map[string]int{}, errs: verrs}
	s := New(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	d.add(d.decode(root, reflect.ValueOf(s).Elem(), ""))
	d.applyOMB(s)
	for _, e := range d.exclusive() {
		d.add(e)
	}
	if s.Name != "" && !nameRE.MatchString(s.Name) {
		if slug, ok := freeTextName(s.Name); ok {
			d.notes = append(d.notes, fmt.Sprintf("name %q is free text: results call the workload %s", s.Name, slug))
			if s.Description == "" {
				s.Description = s.Name
			}
			s.Name = slug
		}
	}
	// A file that gives only the minutes form drops New's default of the
	// duration form, which resolve would otherwise keep.
	if d.has("testDurationMinutes") && !d.has("testDuration") {
		if s.TestMinutes == 0 {
			d.add(&Error{File: file, Line: d.lines["testDurationMinutes"], Field: "testDurationMinutes",
				Msg: "0 is not above 0; use a number of minutes like 0.5"})
		}
		s.TestLength = 0
	}
	if d.has("warmupDurationMinutes") && !d.has("warmupDuration") {
		s.WarmupLength = 0
	}
	s.resolve()
	for _, e := range s.validateAll() {
		if d.failed(e.Field) || d.failed(sameField[e.Field]) {
			continue // the field did not decode: its own error says why
		}
		e.File, e.Line = file, d.lineOf(e)
		d.add(e)
	}
	if len(d.errs) > 0 {
		return nil, nil, errorsOf(d.errs)
	}
	return s, d.notes, nil
}

// sameField pairs the fields that set one setting two ways.
var sameField = map[string]string{
	"testDuration": "testDurationMinutes", "testDurationMinutes": "testDuration",
	"warmupDuration": "warmupDurationMinutes", "warmupDurationMinutes": "warmupDuration",
	"consumers": "consumerPerSubscription",
}

// asError returns err as an *Error (parseNode returns only those).
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Msg: err.Error(), err: err}
}

// parseNode parses data into the root node of its one YAML document, a
// mapping.
func parseNode(file string, data []byte) (*node, error) {
	docs, se := parseYAML(data)
	if se != nil {
		e := &Error{File: file, Line: se.line, err: se.cause}
		fix := se.fix
		if fix == "" {
			fix = "check the indentation and quoting near this line"
		}
		if line := tabIndentLine(data); line > 0 {
			// YAML forbids tabs in indentation; the fix names the line
			// of the tab, which may lie before the one the parser stopped at.
			if e.Line == 0 {
				e.Line = line
			}
			fix = fmt.Sprintf("line %d is indented with a tab; indent with spaces", line)
		}
		e.Msg = "malformed YAML: " + se.msg + "; " + fix
		return nil, e
	}
	if len(docs) > 1 {
		return nil, &Error{File: file, Line: docs[1].line, Msg: "holds more than one YAML document; put one workload in each file and remove the extra ---"}
	}
	if len(docs) == 0 || docs[0].root == nil || isNull(docs[0].root) {
		e := &Error{File: file, Msg: "is empty; write the workload's fields, like \"name: my-workload\""}
		if len(docs) > 0 && docs[0].root != nil {
			e.Line = docs[0].root.line
		}
		return nil, e
	}
	root := docs[0].root
	if root.kind != mappingNode {
		return nil, &Error{File: file, Line: root.line, Msg: fmt.Sprintf(
			"holds %s, not a mapping of workload fields; write one field per line, like \"name: my-workload\"", describe(root))}
	}
	return root, nil
}

// tabIndentLine returns the 1-based number of the first line indented with a
// tab, or 0.
func tabIndentLine(data []byte) int {
	for i, line := range strings.Split(string(data), "\n") {
		indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
		if strings.Contains(indent, "\t") {
			return i + 1
		}
	}
	return 0
}

// decoder walks a node into a Spec, checking each key against the yaml
// tags of the struct it fills and recording the line of every field path.
type decoder struct {
	file  string
	lines map[string]int // field path -> line of its key (or list item)
	errs  []*Error       // every problem found, in file order

	// OpenMessaging Benchmark fields (omb.go).
	isOMB        bool
	ombConsumers *int
	notes        []string
}

// add records err (an *Error, or nil).
// add records one problem. A problem already reported for the same line,
// of the same field or of the whole line (a ${VAR} that did not expand),
// is one problem: the value that did not decode or expand is not reported
// again by every check that reads it.
func (d *decoder) add(err error) {
	if err == nil {
		return
	}
	e := asError(err)
	for _, prev := range d.errs {
		if e.Line > 0 && prev.Line == e.Line && prev.File == e.File && (prev.Field == "" || prev.Field == e.Field) {
			return
		}
	}
	d.errs = append(d.errs, e)
}

// failed reports whether field (or a field inside it) had a decode error,
// or its line had one (a ${VAR} on it that did not expand).
func (d *decoder) failed(field string) bool {
	if field == "" {
		return false
	}
	line := d.lines[field]
	for _, e := range d.errs {
		if e.Field == field || strings.HasPrefix(e.Field, field+".") || strings.HasPrefix(e.Field, field+"[") {
			return true
		}
		if line > 0 && e.Line == line && e.Field == "" {
			return true
		}
	}
	return false
}

var durationType = reflect.TypeFor[time.Duration]()

func (d *decoder) fail(n *node, field, format string, args ...any) *Error {
	return &Error{File: d.file, Line: n.line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) has(path string) bool { _, ok := d.lines[path]; return ok }

// lineOf finds the line of a validation error: its field, its other fields,
// then the nearest enclosing field present in the file; 0 when none is.
func (d *decoder) lineOf(e *Error) int {
	for _, p := range append([]string{e.Field}, e.alt...) {
		if l, ok := d.lines[p]; ok {
			return l
		}
	}
	for p := e.Field; p != ""; {
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
		if l, ok := d.lines[p]; ok {
			return l
		}
	}
	return 0
}

// exclusive reports pairs of fields of which a file may give only one.
func (d *decoder) exclusive() []*Error {
	var out []*Error
	pairs := [][2]string{
		{"testDuration", "testDurationMinutes"},
		{"warmupDuration", "warmupDurationMinutes"},
	}
	for i := 0; d.has(fmt.Sprintf("faults[%d]", i)); i++ {
		p := fmt.Sprintf("faults[%d].", i)
		pairs = append(pairs, [2]string{p + "at", p + "every"})
	}
	for _, p := range pairs {
		a, b := d.lines[p[0]], d.lines[p[1]]
		if a == 0 || b == 0 {
			continue
		}
		first, second := p[0], p[1]
		if b < a {
			first, second = second, first
		}
		msg := fmt.Sprintf("set together with %s (line %d); set only one of them", lastPart(first), d.lines[first])
		if strings.HasSuffix(first, ".at") || strings.HasSuffix(first, ".every") {
			msg += ": at fires once, every repeats"
		}
		out = append(out, &Error{File: d.file, Line: d.lines[second], Field: second, Msg: msg})
	}
	return out
}

func lastPart(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// describe names what a node holds, for messages.
func describe(n *node) string {
	switch n.kind {
	case mappingNode:
		return "a mapping"
	case sequenceNode:
		return "a list"
	case scalarNode:
		if n.tag == tagStr {
			return strconv.Quote(n.value)
		}
		return n.value
	}
	return "an unknown YAML node"
}

func isNull(n *node) bool { return n.kind == scalarNode && n.tag == tagNull }

// decode stores n into v; field is v's path. A null value leaves v as it is,
// so an empty field keeps its default.
func (d *decoder) decode(n *node, v reflect.Value, field string) error {
	if isNull(n) {
		return nil
	}
	if v.Type() == durationType {
		return d.duration(n, v, field)
	}
	switch v.Kind() {
	case reflect.Struct:
		return d.mapping(n, v, field)
	case reflect.Slice:
		return d.sequence(n, v, field)
	case reflect.Map:
		return d.params(n, v, field)
	}
	if n.kind != scalarNode {
		return d.fail(n, field, "%s is not a single value; write one value after the colon", describe(n))
	}
	tag := n.tag
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.value)
	case reflect.Bool:
		b, ok := n.parsed.(bool)
		if tag != tagBool || !ok {
			return d.fail(n, field, "%s is not true or false; write true or false", describe(n))
		}
		v.SetBool(b)
	case reflect.Int:
		i, ok := n.intValue()
		switch {
		case tag == tagStr && isNumber(n.value):
			return d.fail(n, field, "%s is quoted, so it is text, not a whole number; remove the quotes", describe(n))
		case tag != tagInt || !ok:
			return d.fail(n, field, "%s is not a whole number; write digits only, like 8", describe(n))
		}
		v.SetInt(int64(i))
	case reflect.Float64:
		x, ok := n.floatValue()
		switch {
		case tag == tagStr && isNumber(n.value):
			return d.fail(n, field, "%s is quoted, so it is text, not a number; remove the quotes", describe(n))
		case tag != tagInt && tag != tagFloat, !ok:
			return d.fail(n, field, "%s is not a number; write a number like 0.5", describe(n))
		case math.IsNaN(x) || math.IsInf(x, 0):
			return d.fail(n, field, "%s is not a finite number; write a number like 0.5", describe(n))
		}
		v.SetFloat(x)
	default:
		return d.fail(n, field, "has a Go type (%s) the decoder does not handle; this is a bug in sharebench", v.Type())
	}
	return nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	return err == nil
}

func (d *decoder) duration(n *node, v reflect.Value, field string) error {
	if n.kind != scalarNode {
		return d.fail(n, field, "%s is not a duration; write a Go duration like 500ms, 2s or 1m30s", describe(n))
	}
	dur, err := time.ParseDuration(n.value)
	if err != nil {
		if n.tag == tagInt || n.tag == tagFloat {
			return d.fail(n, field, "%s has no unit; add one, like %sms (Go duration units: ns, us, ms, s, m, h)", n.value, n.value)
		}
		return d.fail(n, field, "%s is not a duration; write a Go duration like 500ms, 2s or 1m30s", describe(n))
	}
	v.SetInt(int64(dur))
	return nil
}

// structField is one field of a struct the decoder fills.
type structField struct {
	name  string // the yaml name
	index int
}

func yamlFields(t reflect.Type) []structField {
	var out []structField
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			out = append(out, structField{name: name, index: i})
		}
	}
	return out
}

func fieldNames(fs []structField) []string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return names
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func (d *decoder) mapping(n *node, v reflect.Value, field string) error {
	fields := yamlFields(v.Type())
	if n.kind != mappingNode {
		return d.fail(n, field, "%s is not a mapping; write its fields (%s) indented on the lines below it",
			describe(n), andList(fieldNames(fields)))
	}
	// Every key is checked: a problem is recorded and the next key read,
	// so one run reports all of a file's problems.
	for i := 0; i+1 < len(n.content); i += 2 {
		k, val := n.content[i], n.content[i+1]
		path := join(field, k.value)
		if k.kind != scalarNode {
			d.add(d.fail(k, field, "has %s as a key; keys are field names like %s", describe(k), fields[0].name))
			continue
		}
		var sf *structField
		for j := range fields {
			if fields[j].name == k.value {
				sf = &fields[j]
			}
		}
		if sf == nil {
			if spec, ok := v.Addr().Interface().(*Spec); ok && d.omb(k, val, spec) {
				continue
			}
			d.add(d.fail(k, path, "%s", unknownField(k.value, fieldNames(fields))))
			continue
		}
		if line, dup := d.lines[path]; dup {
			d.add(d.fail(k, path, "given twice (first on line %d); keep one", line))
			continue
		}
		d.lines[path] = k.line
		d.add(d.decode(val, v.Field(sf.index), path))
	}
	return nil
}

func (d *decoder) sequence(n *node, v reflect.Value, field string) error {
	if n.kind != sequenceNode {
		if n.kind == scalarNode {
			return d.fail(n, field, "%s is not a list; write a list, like [%s]", describe(n), n.value)
		}
		return d.fail(n, field, "%s is not a list; write each item on its own line starting with \"- \"", describe(n))
	}
	out := reflect.MakeSlice(v.Type(), len(n.content), len(n.content))
	for i, item := range n.content {
		path := fmt.Sprintf("%s[%d]", field, i)
		d.lines[path] = item.line
		d.add(d.decode(item, out.Index(i), path))
	}
	v.Set(out)
	return nil
}

// params decodes a map of string to string, such as a fault's params.
func (d *decoder) params(n *node, v reflect.Value, field string) error {
	if n.kind != mappingNode {
		return d.fail(n, field, "%s is not a mapping; write each param as \"name: value\" on its own line below it", describe(n))
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.content)/2)
	for i := 0; i+1 < len(n.content); i += 2 {
		k, val := n.content[i], n.content[i+1]
		path := join(field, k.value)
		switch {
		case k.kind != scalarNode:
			return d.fail(k, field, "has %s as a key; keys are param names like worker", describe(k))
		case val.kind != scalarNode:
			return d.fail(val, path, "%s is not a single value; write one value after the colon", describe(val))
		}
		if line, dup := d.lines[path]; dup {
			return d.fail(k, path, "given twice (first on line %d); keep one", line)
		}
		d.lines[path] = k.line
		value := val.value
		if isNull(val) {
			value = ""
		}
		m.SetMapIndex(reflect.ValueOf(k.value), reflect.ValueOf(value))
	}
	v.Set(m)
	return nil
}

// unknownField says a key is not a field and suggests the one meant.
func unknownField(key string, valid []string) string {
	if key == "<<" {
		return "YAML merge keys are not supported; write the fields out"
	}
	best, bestDist := "", 4
	lk := strings.ToLower(key)
	for _, v := range valid {
		lv := strings.ToLower(v)
		dist := editDistance(lk, lv)
		if lk == lv || (len(lk) >= 4 && (strings.HasPrefix(lv, lk) || strings.HasPrefix(lk, lv))) {
			dist = 0
		}
		if dist < bestDist && dist < max(len(lk), len(lv))/2+1 {
			best, bestDist = v, dist
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown field; did you mean %q?", best)
	}
	return "unknown field; the fields here are " + andList(valid)
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
