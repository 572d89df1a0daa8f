// This file holds node, the YAML tree the decoder walks, and parseYAML,
// which builds it from go-yaml's AST: every value with its kind, tag and
// line, aliases resolved to the nodes of their anchors.

package workloads

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// nodeKind is the shape of a node.
type nodeKind int

const (
	scalarNode nodeKind = iota + 1
	mappingNode
	sequenceNode
)

// YAML's tags for the scalars the decoder tells apart.
const (
	tagStr   = "!!str"
	tagInt   = "!!int"
	tagFloat = "!!float"
	tagBool  = "!!bool"
	tagNull  = "!!null"
	tagMerge = "!!merge"
)

// node is one YAML value. A node is never an alias: an alias is the node of
// its anchor, shared, so an error in an aliased value names the anchor's line.
type node struct {
	kind  nodeKind
	tag   string // a scalar's tag: one of the tag constants, or the file's own (!custom)
	value string // a scalar's text as written, quotes and escapes removed
	// parsed is a scalar's value as its tag reads it: int64 or uint64 for
	// !!int, float64 for !!float, bool for !!bool; nil otherwise.
	parsed  any
	line    int     // 1-based line where the value starts
	content []*node // a mapping's keys and values in turn, or a list's items
}

// yamlFloatRE is a float of YAML's core schema. A plain scalar of this form
// that go-yaml reads as text (an exponent without a '.', like 1e3, or a
// whole number beyond 64 bits) is a !!float: it is a number to the reader,
// so a number field takes it and a whole-number field says it is not whole.
var yamlFloatRE = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// syntaxError is why data is not YAML, at a line (0 when go-yaml gives
// none).
type syntaxError struct {
	line  int
	msg   string // what is wrong
	fix   string // how to fix it; empty when only the line can say
	cause error  // go-yaml's error, if it came from go-yaml
}

// document is one YAML document of a file.
type document struct {
	root *node // nil when the document has no content
	line int   // the line of its --- or, without one, of its content
}

// parseYAML parses data into its documents.
func parseYAML(data []byte) ([]document, *syntaxError) {
	// Duplicate keys are the decoder's to report, naming the field and the
	// line of its first value.
	f, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		se := &syntaxError{msg: printable(err.Error()), cause: err}
		var ye yaml.Error
		if errors.As(err, &ye) {
			se.msg, se.line = printable(ye.GetMessage()), lineOf(ye.GetToken())
		}
		return nil, se
	}
	c := &converter{anchors: map[string]*node{}}
	var docs []document
	for _, doc := range f.Docs {
		var d document
		if doc.Body != nil {
			var se *syntaxError
			if d.root, se = c.convert(doc.Body); se != nil {
				return nil, se
			}
			d.line = d.root.line
		}
		if doc.Start != nil {
			d.line = lineOf(doc.Start)
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// printable escapes the control characters of a go-yaml message (it quotes
// the offending character, a tab included), so an error stays one line.
func printable(msg string) string {
	var b strings.Builder
	for _, r := range msg {
		if strconv.IsPrint(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// converter turns go-yaml's AST into nodes, resolving each alias to the
// anchor defined before it in the file.
type converter struct {
	anchors map[string]*node
}

// lineOf is the 1-based line of tk, 0 when go-yaml gives none.
func lineOf(tk *token.Token) int {
	if tk == nil || tk.Position == nil {
		return 0
	}
	return tk.Position.Line
}

// convert returns the node of n, which is not nil.
func (c *converter) convert(n ast.Node) (*node, *syntaxError) {
	tk := n.GetToken()
	scalar := func(tag string, parsed any) *node {
		return &node{kind: scalarNode, tag: tag, value: tk.Value, parsed: parsed, line: lineOf(tk)}
	}
	switch n := n.(type) {
	case *ast.NullNode:
		return scalar(tagNull, nil), nil
	case *ast.BoolNode:
		return scalar(tagBool, n.Value), nil
	case *ast.IntegerNode:
		return scalar(tagInt, n.Value), nil
	case *ast.FloatNode:
		return scalar(tagFloat, n.Value), nil
	case *ast.InfinityNode:
		return scalar(tagFloat, n.Value), nil
	case *ast.NanNode:
		return scalar(tagFloat, math.NaN()), nil
	case *ast.StringNode:
		if tk.Type == token.StringType && strings.ContainsRune(strings.Trim(tk.Origin, " \t\r\n"), '\t') {
			// go-yaml drops a tab inside an unquoted value; the file
			// would say something other than what it reads as.
			return nil, &syntaxError{line: lineOf(tk), msg: fmt.Sprintf("a tab inside the unquoted value %q", strings.TrimSpace(tk.Origin)),
				fix: "quote the value, or write spaces"}
		}
		s := scalar(tagStr, nil)
		s.value = n.Value
		if digits := strings.ReplaceAll(n.Value, "_", ""); tk.Type == token.StringType && yamlFloatRE.MatchString(digits) {
			if x, err := strconv.ParseFloat(digits, 64); err == nil {
				s.tag, s.parsed = tagFloat, x
			}
		}
		return s, nil
	case *ast.LiteralNode:
		s := scalar(tagStr, nil)
		s.value = n.Value.Value
		return s, nil
	case *ast.MergeKeyNode:
		return scalar(tagMerge, nil), nil
	case *ast.TagNode:
		return c.tagged(n)
	case *ast.AnchorNode:
		v, se := c.value(n.Value, n.Start)
		if se != nil {
			return nil, se
		}
		c.anchors[n.Name.GetToken().Value] = v
		return v, nil
	case *ast.AliasNode:
		name := n.Value.GetToken().Value
		v, ok := c.anchors[name]
		if !ok {
			return nil, &syntaxError{line: lineOf(tk), msg: fmt.Sprintf("alias *%s names no anchor", name),
				fix: fmt.Sprintf("put &%s on a value above it, or write the value out", name)}
		}
		return v, nil
	case *ast.MappingKeyNode:
		return c.value(n.Value, n.Start)
	case *ast.MappingNode:
		m := &node{kind: mappingNode, line: lineOf(n.Start)}
		if !n.IsFlowStyle && len(n.Values) > 0 {
			m.line = lineOf(n.Values[0].Key.GetToken())
		}
		for _, kv := range n.Values {
			if se := c.pair(m, kv); se != nil {
				return nil, se
			}
		}
		return m, nil
	case *ast.MappingValueNode:
		m := &node{kind: mappingNode, line: lineOf(n.Key.GetToken())}
		return m, c.pair(m, n)
	case *ast.SequenceNode:
		s := &node{kind: sequenceNode, line: lineOf(n.Start)}
		for _, item := range n.Values {
			v, se := c.value(item, n.Start)
			if se != nil {
				return nil, se
			}
			s.content = append(s.content, v)
		}
		return s, nil
	}
	return nil, &syntaxError{line: lineOf(tk), msg: fmt.Sprintf("%s is not a value a workload file holds", n.Type())}
}

// value converts n, or a null at at's line when n is absent.
func (c *converter) value(n ast.Node, at *token.Token) (*node, *syntaxError) {
	if n == nil {
		return &node{kind: scalarNode, tag: tagNull, line: lineOf(at)}, nil
	}
	return c.convert(n)
}

// pair appends the key and the value of kv to m.
func (c *converter) pair(m *node, kv *ast.MappingValueNode) *syntaxError {
	k, se := c.value(kv.Key, kv.Start)
	if se != nil {
		return se
	}
	v, se := c.value(kv.Value, kv.Start)
	if se != nil {
		return se
	}
	m.content = append(m.content, k, v)
	return nil
}

// tagged converts a value with an explicit tag. The tag replaces the one its
// text would have, keeping the text as written; the parsed value stays when
// the text has that tag anyway, or is a whole number tagged !!float.
func (c *converter) tagged(n *ast.TagNode) (*node, *syntaxError) {
	v, se := c.value(n.Value, n.Start)
	if se != nil || v.kind != scalarNode {
		return v, se
	}
	tag := n.Start.Value
	if t, ok := strings.CutPrefix(tag, "!<tag:yaml.org,2002:"); ok {
		tag = "!!" + strings.TrimSuffix(t, ">")
	}
	if tag == v.tag {
		return v, nil
	}
	out := &node{kind: scalarNode, tag: tag, value: v.value, line: v.line}
	if tag == tagFloat {
		switch p := v.parsed.(type) {
		case int64:
			out.parsed = float64(p)
		case uint64:
			out.parsed = float64(p)
		}
	}
	return out, nil
}

// intValue returns the value of an !!int scalar; ok is false for any other
// node and for a value beyond the range of int.
func (n *node) intValue() (int, bool) {
	switch p := n.parsed.(type) {
	case int64:
		if p >= math.MinInt && p <= math.MaxInt {
			return int(p), true
		}
	case uint64:
		if p <= math.MaxInt {
			return int(p), true
		}
	}
	return 0, false
}

// floatValue returns the value of an !!int or !!float scalar; ok is false
// for any other node.
func (n *node) floatValue() (float64, bool) {
	switch p := n.parsed.(type) {
	case float64:
		return p, true
	case int64:
		return float64(p), true
	case uint64:
		return float64(p), true
	}
	return 0, false
}
