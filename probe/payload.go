package probe

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// PayloadType says how a Payload's bytes are written in a config.
type PayloadType string

const (
	// PayloadText: the bytes are the UTF-8 text of the Text field.
	PayloadText PayloadType = "Text"
	// PayloadHex: the bytes are written as hex digits in the Hex field
	// ("706f6e67"); ASCII white space between digits is ignored.
	PayloadHex PayloadType = "Hex"
	// PayloadBinary: the bytes are the Binary field, base64 in JSON (Envoy
	// Gateway's "Binary" payload).
	PayloadBinary PayloadType = "Binary"
)

// errEmptyPayload is returned for a payload that holds no bytes: a segment
// that matches everything and a request that sends nothing are both mistakes.
var errEmptyPayload = errors.New("probe: payload is empty")

// Payload is a sequence of bytes to send (an HTTP request body, a TCP send)
// or to look for (one segment of an expected response). Its JSON form is
// Envoy Gateway's: {"type":"Text","text":"pong"},
// {"type":"Binary","binary":"cG9uZw=="}, plus {"type":"Hex","hex":"706f6e67"}.
//
// The zero value is an invalid, empty payload. Payload is a plain value,
// safe to copy.
type Payload struct {
	// Type selects the field that holds the bytes; empty means Text.
	Type PayloadType `json:"type,omitempty"`
	// Text holds the bytes when Type is Text.
	Text string `json:"text,omitempty"`
	// Hex holds the bytes as hex digits when Type is Hex.
	Hex string `json:"hex,omitempty"`
	// Binary holds the bytes when Type is Binary (base64 in JSON).
	Binary []byte `json:"binary,omitempty"`
}

// textPayload returns a Text payload holding s.
func textPayload(s string) Payload { return Payload{Type: PayloadText, Text: s} }

// hexPayload returns a Hex payload holding the hex digits h.
func hexPayload(h string) Payload { return Payload{Type: PayloadHex, Hex: h} }

// binaryPayload returns a Binary payload holding a copy of b.
func binaryPayload(b []byte) Payload { return Payload{Type: PayloadBinary, Binary: bytes.Clone(b)} }

// decode returns the payload's bytes. It fails for an unknown type, bad hex digits, a
// field set that does not belong to the type, and an empty result
// (errEmptyPayload).
func (p Payload) decode() ([]byte, error) {
	var b []byte
	switch p.Type {
	case PayloadText, "":
		if p.Hex != "" || len(p.Binary) > 0 {
			return nil, fmt.Errorf("probe: payload of type %q: only text may be set", PayloadText)
		}
		b = []byte(p.Text)
	case PayloadHex:
		if p.Text != "" || len(p.Binary) > 0 {
			return nil, fmt.Errorf("probe: payload of type %q: only hex may be set", PayloadHex)
		}
		var err error
		if b, err = parseHex(p.Hex); err != nil {
			return nil, err
		}
	case PayloadBinary:
		if p.Text != "" || p.Hex != "" {
			return nil, fmt.Errorf("probe: payload of type %q: only binary may be set", PayloadBinary)
		}
		b = bytes.Clone(p.Binary)
	default:
		return nil, fmt.Errorf("probe: payload type %q: want %q, %q or %q", p.Type, PayloadText, PayloadHex, PayloadBinary)
	}
	if len(b) == 0 {
		return nil, errEmptyPayload
	}
	return b, nil
}

// ErrInvalidPayload is wrapped by the *FieldError Payload.Validate
// returns. A payload inside a config is reported under that config's
// sentinel and path instead (e.g. ErrTCPConfig, "send[0]").
var ErrInvalidPayload = errors.New("probe: invalid payload")

// Validate reports whether the payload decodes to at least one byte, as a
// *FieldError wrapping ErrInvalidPayload with the path "payload".
func (p Payload) Validate() error { return p.validate(ErrInvalidPayload, "payload") }

// validate is Validate as a *FieldError for the config field named field,
// wrapping sentinel.
func (p Payload) validate(sentinel error, field string) error {
	if _, err := p.decode(); err != nil {
		return payloadFieldErr(sentinel, field, p, err)
	}
	return nil
}

func payloadFieldErr(sentinel error, field string, p Payload, err error) error {
	return fieldErr(sentinel, field, p.String(), "a payload of at least one byte, "+
		"its type's field only ("+strings.TrimPrefix(err.Error(), "probe: ")+")")
}

// String returns the payload in a short form ("text:pong", "hex:706f",
// "base64:cG9uZw==").
func (p Payload) String() string {
	switch p.Type {
	case PayloadHex:
		return "hex:" + p.Hex
	case PayloadBinary:
		return "base64:" + base64.StdEncoding.EncodeToString(p.Binary)
	}
	return "text:" + p.Text
}

// hexError reports a bad hex string: the byte offset and what is wrong.
type hexError struct {
	// Offset is the position in the input of the offending character, or
	// the input's length for an odd number of digits.
	Offset int
	// Reason says what is wrong ("invalid hex digit 'g'", "odd number of hex digits").
	Reason string
}

// Error returns "probe: hex payload at offset N: reason".
func (e *hexError) Error() string {
	return fmt.Sprintf("probe: hex payload at offset %d: %s", e.Offset, e.Reason)
}

// parseHex decodes hex digits (either case) into bytes. ASCII white space
// (space, tab, CR, LF) anywhere is ignored, so "70 6f 6e 67" and
// "706f6e67" are the same; anything else that is not a hex digit, or an odd
// number of digits, is a *hexError. An input with no digits yields
// errEmptyPayload.
func parseHex(s string) ([]byte, error) {
	out := make([]byte, 0, len(s)/2)
	var hi byte
	half := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		var v byte
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return nil, &hexError{Offset: i, Reason: fmt.Sprintf("invalid hex digit %q", c)}
		}
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		return nil, &hexError{Offset: len(s), Reason: "odd number of hex digits"}
	}
	if len(out) == 0 {
		return nil, errEmptyPayload
	}
	return out, nil
}

// parsePayload reads a payload from its short text form, for flags and
// command lines: "text:<text>", "hex:<hex digits>" or "base64:<base64>";
// a string with none of these prefixes is text. The payload must decode to
// at least one byte.
func parsePayload(spec string) (Payload, error) {
	var p Payload
	switch {
	case strings.HasPrefix(spec, "hex:"):
		p = hexPayload(spec[len("hex:"):])
	case strings.HasPrefix(spec, "base64:"):
		b, err := base64.StdEncoding.DecodeString(spec[len("base64:"):])
		if err != nil {
			return Payload{}, fmt.Errorf("probe: base64 payload: %w", err)
		}
		p = Payload{Type: PayloadBinary, Binary: b}
	case strings.HasPrefix(spec, "text:"):
		p = textPayload(spec[len("text:"):])
	default:
		p = textPayload(spec)
	}
	if err := p.Validate(); err != nil {
		return Payload{}, err
	}
	return p, nil
}

// Segments is an ordered list of payloads expected in a response: each must
// appear after the end of the previous one's match, not necessarily right
// after it (Envoy's rule 8). In JSON it is a list of payloads, and a single
// payload object is read as a list of one (Envoy Gateway's expectedResponse
// and tcp.receive hold one payload).
type Segments []Payload

// UnmarshalJSON reads a list of payloads or a single payload object.
func (s *Segments) UnmarshalJSON(b []byte) error {
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) > 0 && t[0] == '{' {
		var p Payload
		if err := json.Unmarshal(b, &p); err != nil {
			return err
		}
		*s = Segments{p}
		return nil
	}
	var ps []Payload
	if err := json.Unmarshal(b, &ps); err != nil {
		return err
	}
	*s = ps
	return nil
}

// String lists the segments in Payload.String's form.
func (s Segments) String() string {
	parts := make([]string, len(s))
	for i, p := range s {
		parts[i] = p.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// decode returns every segment's bytes; field names the config field for
// errors, which are *FieldErrors wrapping sentinel.
func (s Segments) decode(sentinel error, field string) ([][]byte, error) {
	if len(s) == 0 {
		return nil, nil
	}
	out := make([][]byte, len(s))
	for i, p := range s {
		b, err := p.decode()
		if err != nil {
			return nil, payloadFieldErr(sentinel, fmt.Sprintf("%s[%d]", field, i), p, err)
		}
		out[i] = b
	}
	return out, nil
}

// segMatcher looks for ordered, non-contiguous segments in a stream of bytes
// fed in pieces. It keeps only the bytes a match still in progress may need
// (at most the longest segment minus one), so a whole-body window costs no
// more memory than a small one. The zero value with segs set is ready.
type segMatcher struct {
	segs [][]byte
	next int    // index of the segment searched for
	buf  []byte // carried bytes not yet ruled out for segs[next]
}

// reset readies m for a new stream, keeping its buffer.
func (m *segMatcher) reset(segs [][]byte) {
	m.segs, m.next, m.buf = segs, 0, m.buf[:0]
}

// done reports whether every segment has been found.
func (m *segMatcher) done() bool { return m.next >= len(m.segs) }

// feed consumes p and reports whether every segment has now been found.
func (m *segMatcher) feed(p []byte) bool {
	if m.done() || len(p) == 0 {
		return m.done()
	}
	m.buf = append(m.buf, p...)
	for !m.done() {
		seg := m.segs[m.next]
		i := bytes.Index(m.buf, seg)
		if i < 0 {
			if keep := len(seg) - 1; len(m.buf) > keep {
				n := copy(m.buf, m.buf[len(m.buf)-keep:])
				m.buf = m.buf[:n]
			}
			return false
		}
		n := copy(m.buf, m.buf[i+len(seg):])
		m.buf = m.buf[:n]
		m.next++
	}
	return true
}

// matchSegments reports whether segs appear in order in b (a one-shot feed).
func matchSegments(segs [][]byte, b []byte) bool {
	var m segMatcher
	m.reset(segs)
	return m.done() || m.feed(b)
}
