package main

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gslbkit/gslb/internal/jsontime"
)

// The config is YAML decoded through yaml.v3's node API (go.yaml.in/yaml/v3,
// the YAML parser sigs.k8s.io/yaml itself builds on): every node keeps its
// line, so an error names the field's path and line. The tree is checked
// against the Go types before anything is decoded: a key must match a field
// name exactly (a key in the wrong case is an error naming the right one,
// where encoding/json would silently accept it), unknown and duplicate keys
// are errors, and a value of the wrong type is reported where it is. The
// checked tree is then turned into JSON and decoded by the types' own JSON
// methods, so YAML and JSON configs mean the same thing.

// YAMLError is a config error at a place in the YAML: the field's path,
// its line and what is wrong.
type YAMLError struct {
	// Field is the path of the field, e.g. "records[0].ttl" ("" for the
	// document).
	Field string
	// Line is the 1-based line of the value (0 if unknown).
	Line int
	// Msg says what is wrong, e.g. `"thirty" is not a duration`.
	Msg string
}

// Error formats the path, the line and the message, e.g.
// `gslbd: invalid config: records[0].ttl (line 12): "thirty" is not a
// duration`, or `gslbd: invalid config (line 3): did not find expected key`
// without a field: the prefix of every config error (ErrInvalidConfig).
func (e *YAMLError) Error() string {
	var b strings.Builder
	b.WriteString(ErrInvalidConfig.Error())
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns ErrInvalidConfig.
func (e *YAMLError) Unwrap() error { return ErrInvalidConfig }

// maxYAMLNodes bounds the nodes visited, aliases expanded, so a small
// document of nested aliases cannot take unbounded time or memory.
const maxYAMLNodes = 1 << 21

// decodeYAML decodes data onto out (a pointer to a struct with JSON tags)
// as described above.
func decodeYAML(data []byte, out any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return yamlSyntaxError(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty document: the defaults
	}
	root := doc.Content[0]
	c := &yamlChecker{}
	if err := c.check(root, reflect.TypeOf(out).Elem(), ""); err != nil {
		return err
	}
	if err := checkZeros(root, "", 0); err != nil {
		return err
	}
	js, err := c.toJSON(root, "")
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return &YAMLError{Msg: strings.TrimPrefix(err.Error(), "json: ")}
	}
	return nil
}

// yamlSyntaxError rewrites a yaml.v3 parse error ("yaml: line 3: ...") as
// a YAMLError with its line.
func yamlSyntaxError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ": "); ok {
			if l, e := strconv.Atoi(n); e == nil {
				line, msg = l, tail
			}
		}
	}
	return &YAMLError{Line: line, Msg: msg}
}

type yamlChecker struct{ visited int }

// yamlPlain marks a struct whose UnmarshalJSON only sets the defaults of
// fields left out: the checker treats it as a plain struct, field by field.
type yamlPlain interface{ yamlPlain() }

var (
	plainYAML       = reflect.TypeFor[yamlPlain]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	durationTypes   = []reflect.Type{reflect.TypeFor[time.Duration](), reflect.TypeFor[jsontime.Duration]()}
)

// yamlFieldTypes names the Go type a json.RawMessage field is decoded into
// later, by path suffix, so it can be checked like the others.
var yamlFieldTypes = map[string]reflect.Type{
	"RecordSpec.Probe": reflect.TypeFor[ProbeSpec](),
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// resolve follows aliases and counts the node.
func (c *yamlChecker) resolve(n *yaml.Node, path string) (*yaml.Node, error) {
	for depth := 0; n.Kind == yaml.AliasNode; depth++ {
		if n.Alias == nil || depth > 100 {
			return nil, &YAMLError{Field: path, Line: n.Line, Msg: "alias loop"}
		}
		n = n.Alias
	}
	c.visited++
	if c.visited > maxYAMLNodes {
		return nil, &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("more than %d values (aliases expanded)", maxYAMLNodes)}
	}
	return n, nil
}

// pairs returns a mapping's key/value pairs, merge keys ("<<") expanded
// (explicit keys win), refusing duplicate keys.
func (c *yamlChecker) pairs(n *yaml.Node, path string) ([][2]*yaml.Node, error) {
	var out [][2]*yaml.Node
	seen := map[string]int{}
	var merged [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			v, err := c.resolve(v, path)
			if err != nil {
				return nil, err
			}
			srcs := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				srcs = v.Content
			}
			for _, s := range srcs {
				s, err := c.resolve(s, path)
				if err != nil {
					return nil, err
				}
				if s.Kind != yaml.MappingNode {
					return nil, &YAMLError{Field: path, Line: k.Line, Msg: "a merge key (<<) needs a mapping"}
				}
				ps, err := c.pairs(s, path)
				if err != nil {
					return nil, err
				}
				merged = append(merged, ps...)
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, &YAMLError{Field: path, Line: k.Line, Msg: "a key must be a plain string"}
		}
		if first, dup := seen[k.Value]; dup {
			return nil, &YAMLError{Field: join(path, k.Value), Line: k.Line, Msg: fmt.Sprintf("key %q appears twice (first on line %d)", k.Value, first)}
		}
		seen[k.Value] = k.Line
		out = append(out, [2]*yaml.Node{k, v})
	}
	for _, p := range merged {
		if _, ok := seen[p[0].Value]; !ok {
			seen[p[0].Value] = p[0].Line
			out = append(out, p)
		}
	}
	return out, nil
}

// jsonFields maps a struct's JSON keys to their fields, embedded structs
// without a tag flattened as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// unknownKey reports a key that names no field, pointing at the right key
// when only its case is wrong.
func unknownKey(t reflect.Type, fields map[string]reflect.StructField, k *yaml.Node, path string) error {
	for name := range fields {
		if strings.EqualFold(name, k.Value) {
			return &YAMLError{Field: join(path, k.Value), Line: k.Line,
				Msg: fmt.Sprintf("unknown field %q: keys are case-sensitive, did you mean %q?", k.Value, name)}
		}
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	return &YAMLError{Field: join(path, k.Value), Line: k.Line,
		Msg: fmt.Sprintf("unknown field %q (allowed: %s)", k.Value, strings.Join(names, ", "))}
}

// check walks n beside the Go type t it will be decoded into.
func (c *yamlChecker) check(n *yaml.Node, t reflect.Type, path string) error {
	n, err := c.resolve(n, path)
	if err != nil {
		return err
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || t.Kind() == reflect.Interface {
		return nil
	}
	if (reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)) && !reflect.PointerTo(t).Implements(plainYAML) {
		return c.checkCustom(n, t, path)
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("want a mapping of fields, got %s", describe(n))}
		}
		fields := jsonFields(t)
		ps, err := c.pairs(n, path)
		if err != nil {
			return err
		}
		for _, p := range ps {
			f, ok := fields[p[0].Value]
			if !ok {
				return unknownKey(t, fields, p[0], path)
			}
			ft := f.Type
			if alt, ok := yamlFieldTypes[t.Name()+"."+f.Name]; ok {
				ft = alt
			}
			if err := c.check(p[1], ft, join(path, p[0].Value)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && n.Kind == yaml.ScalarNode {
			return nil // []byte from a base64 string
		}
		if n.Kind != yaml.SequenceNode {
			return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("want a list, got %s", describe(n))}
		}
		for i, e := range n.Content {
			if err := c.check(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("want a mapping, got %s", describe(n))}
		}
		ps, err := c.pairs(n, path)
		if err != nil {
			return err
		}
		keyText := reflect.PointerTo(t.Key()).Implements(textUnmarshaler)
		for _, p := range ps {
			if keyText {
				// A key read by its type's UnmarshalText (a prefix, say):
				// encoding/json would report it without path or line.
				k := reflect.New(t.Key()).Interface().(encoding.TextUnmarshaler)
				if err := k.UnmarshalText([]byte(p[0].Value)); err != nil {
					return &YAMLError{Field: join(path, p[0].Value), Line: p[0].Line, Msg: fmt.Sprintf("key %q: %s", p[0].Value, cleanJSONErr(err))}
				}
			}
			if err := c.check(p[1], t.Elem(), join(path, p[0].Value)); err != nil {
				return err
			}
		}
		return nil
	}
	return c.checkLeaf(n, t, path, nil)
}

// checkLeaf decodes a scalar into a fresh t and reports a mismatch in
// words; parentErr, when set, is the error of the enclosing type's own
// decoder, used when t alone accepts the value.
func (c *yamlChecker) checkLeaf(n *yaml.Node, t reflect.Type, path string, parentErr error) error {
	if n.Kind != yaml.ScalarNode {
		if parentErr != nil {
			return &YAMLError{Field: path, Line: n.Line, Msg: cleanJSONErr(parentErr)}
		}
		return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("want %s, got %s", kindWord(t), describe(n))}
	}
	js, err := c.toJSON(n, path)
	if err != nil {
		return err
	}
	err = json.Unmarshal(js, reflect.New(t).Interface())
	if err == nil {
		err = parentErr
	}
	if err == nil {
		return nil
	}
	if isDuration(t) || parentErr != nil && strings.Contains(parentErr.Error(), "duration") {
		return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("%q is not a duration (write it with a unit: 30s, 1m30s, 250ms)", n.Value)}
	}
	if parentErr != nil {
		return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("%q: %s", n.Value, cleanJSONErr(parentErr))}
	}
	return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("%q is not %s", n.Value, kindWord(t))}
}

// checkCustom checks a value of a type with its own JSON decoder: the
// decoder judges it; when it refuses a mapping, each key is tried alone
// to find the one at fault and the search goes on inside it.
func (c *yamlChecker) checkCustom(n *yaml.Node, t reflect.Type, path string) error {
	js, err := c.toJSON(n, path)
	if err != nil {
		return err
	}
	derr := strictUnmarshal(js, t)
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		if derr == nil {
			return nil
		}
		if isDuration(t) {
			return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("%q is not a duration (write it with a unit: 30s, 1m30s, 250ms)", n.Value)}
		}
		return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("%s: %s", describe(n), cleanJSONErr(derr))}
	}
	fields := jsonFields(t)
	ps, err := c.pairs(n, path)
	if err != nil {
		return err
	}
	// Keys are matched exactly even where the type's decoder would not.
	for _, p := range ps {
		if _, ok := fields[p[0].Value]; !ok {
			for name := range fields {
				if strings.EqualFold(name, p[0].Value) {
					return unknownKey(t, fields, p[0], path)
				}
			}
		}
	}
	if derr == nil {
		// Accepted; still look inside for keys in the wrong case.
		for _, p := range ps {
			if f, ok := fields[p[0].Value]; ok {
				if err := c.caseOnly(p[1], f.Type, join(path, p[0].Value)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, p := range ps {
		one := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{p[0], p[1]}}
		js, err := c.toJSON(one, path)
		if err != nil {
			return err
		}
		kerr := strictUnmarshal(js, t)
		if kerr == nil {
			continue
		}
		sub := join(path, p[0].Value)
		f, ok := fields[p[0].Value]
		if !ok {
			return &YAMLError{Field: sub, Line: p[0].Line, Msg: cleanJSONErr(kerr)}
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		v, err := c.resolve(p[1], sub)
		if err != nil {
			return err
		}
		switch {
		case reflect.PointerTo(ft).Implements(jsonUnmarshaler), ft.Kind() == reflect.Struct, ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8, ft.Kind() == reflect.Map:
			if err := c.check(v, ft, sub); err != nil {
				return err
			}
			return &YAMLError{Field: sub, Line: v.Line, Msg: cleanJSONErr(kerr)}
		default:
			return c.checkLeaf(v, ft, sub, kerr)
		}
	}
	return &YAMLError{Field: path, Line: n.Line, Msg: cleanJSONErr(derr)}
}

// caseOnly looks for keys in the wrong case under a value its type's
// decoder accepted.
func (c *yamlChecker) caseOnly(n *yaml.Node, t reflect.Type, path string) error {
	n, err := c.resolve(n, path)
	if err != nil {
		return err
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if t.Kind() != reflect.Pointer && n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode {
			return nil
		}
		if t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode {
			for i, e := range n.Content {
				if err := c.caseOnly(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			return nil
		}
		if t.Kind() == reflect.Map && n.Kind == yaml.MappingNode {
			ps, err := c.pairs(n, path)
			if err != nil {
				return err
			}
			for _, p := range ps {
				if err := c.caseOnly(p[1], t.Elem(), join(path, p[0].Value)); err != nil {
					return err
				}
			}
			return nil
		}
		if t.Kind() != reflect.Pointer {
			return nil
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		return nil
	}
	fields := jsonFields(t)
	ps, err := c.pairs(n, path)
	if err != nil {
		return err
	}
	for _, p := range ps {
		f, ok := fields[p[0].Value]
		if !ok {
			for name := range fields {
				if strings.EqualFold(name, p[0].Value) {
					return unknownKey(t, fields, p[0], path)
				}
			}
			continue
		}
		if err := c.caseOnly(p[1], f.Type, join(path, p[0].Value)); err != nil {
			return err
		}
	}
	return nil
}

func strictUnmarshal(js []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	return dec.Decode(reflect.New(t).Interface())
}

func isDuration(t reflect.Type) bool {
	for _, d := range durationTypes {
		if t == d {
			return true
		}
	}
	return false
}

// cleanJSONErr drops encoding/json's and the decoders' prefixes, which
// name JSON and Go types the user never wrote.
func cleanJSONErr(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("want %s, got a %s", kindWord(te.Type), te.Value)
	}
	s := err.Error()
	for _, p := range []string{"json: ", "gslbd: ", "config: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// kindWord names what a Go type holds, in the config's terms.
func kindWord(t reflect.Type) string {
	if isDuration(t) {
		return "a duration"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number from 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return "a " + t.String()
}

// describe names what a node holds, for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// toJSON turns a checked node into JSON: scalars by their resolved YAML
// tag (quoted values stay strings), mappings with merge keys expanded.
func (c *yamlChecker) toJSON(n *yaml.Node, path string) ([]byte, error) {
	var b bytes.Buffer
	if err := c.writeJSON(&b, n, path); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeJSON writes n; path is that of the value toJSON was given (errors
// below it are rare and carry their own line).
func (c *yamlChecker) writeJSON(b *bytes.Buffer, n *yaml.Node, path string) error {
	n, err := c.resolve(n, path)
	if err != nil {
		return err
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return c.writeJSON(b, n.Content[0], path)
	case yaml.MappingNode:
		ps, err := c.pairs(n, path)
		if err != nil {
			return err
		}
		b.WriteByte('{')
		for i, p := range ps {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, p[0].Value)
			b.WriteByte(':')
			if err := c.writeJSON(b, p[1], path); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := c.writeJSON(b, e, path); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			b.WriteString("null")
		case "!!bool":
			var v bool
			if err := n.Decode(&v); err != nil {
				return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("%q is not true or false", n.Value)}
			}
			b.WriteString(strconv.FormatBool(v))
		case "!!int":
			var v any
			if err := n.Decode(&v); err != nil {
				return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("%q is not a number", n.Value)}
			}
			js, err := json.Marshal(v)
			if err != nil {
				return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("%q is not a number", n.Value)}
			}
			b.Write(js)
		case "!!float":
			var v float64
			if err := n.Decode(&v); err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return &YAMLError{Field: path, Line: n.Line, Msg: fmt.Sprintf("%q is not a finite number", n.Value)}
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		default: // !!str, !!timestamp, !!binary and custom tags: the text
			writeJSONString(b, n.Value)
		}
	default:
		return &YAMLError{Field: path, Line: n.Line, Msg: "unsupported YAML node"}
	}
	return nil
}

// writeJSONString writes s as a JSON string.
func writeJSONString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			js, _ := json.Marshal(s)
			b.Write(js)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// zerolessFields are the paths (list indices written []) of the fields of
// the library's blocks whose zero has no meaning of its own: their
// packages read a zero as "the default", so a zero written in the config
// would be silently replaced. gslbd refuses it instead: leave the field
// out for the default. (The probe policy's are refused by ProbeSpec.)
var zerolessFields = map[string]bool{
	"monitor.concurrency": true, "monitor.latencyWindow": true, "monitor.latencySmoothing": true,
	"transfer.notifyTimeout": true, "transfer.notifyRetries": true,
	"policy.poolLabel": true,
	"node.interval":    true, "node.timeout": true, "node.degradedAfter": true, "node.maxBody": true,
	"records[].steps[].latency.switchMargin": true, "records[].steps[].latency.switchAfter": true,
	"records[].steps[].loadShed.v4Bits": true, "records[].steps[].loadShed.v6Bits": true,
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// checkZeros refuses a zero written for a field of zerolessFields.
func checkZeros(n *yaml.Node, path string, depth int) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil && depth < 100 {
		n, depth = n.Alias, depth+1
	}
	if depth > 100 {
		return nil // check reports alias loops
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			if zerolessFields[indexRE.ReplaceAllString(p, "[]")] && v.Kind == yaml.ScalarNode && zeroScalar(v.Value) {
				return &YAMLError{Field: p, Line: v.Line, Msg: fmt.Sprintf("%q: allowed a non-zero value (leave it out for the default)", v.Value)}
			}
			if err := checkZeros(v, p, depth+1); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			if err := checkZeros(e, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// zeroScalar reports whether a YAML scalar is 0, "" or a zero duration.
func zeroScalar(v string) bool {
	if v == "" {
		return true
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f == 0
	}
	d, err := time.ParseDuration(v)
	return err == nil && d == 0
}
