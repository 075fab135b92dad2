package probe

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestParseHex(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []byte
		err  bool
	}{
		{"lower case", "706f6e67", []byte("pong"), false},
		{"upper case", "706F6E67", []byte("pong"), false},
		{"white space between bytes", "70 6f\t6e\r\n67", []byte("pong"), false},
		{"white space inside a byte", "7 0", []byte{0x70}, false},
		{"odd digits", "706", nil, true},
		{"bad digit", "7g", nil, true},
		{"0x prefix is not hex", "0x70", nil, true},
		{"empty", "", nil, true},
		{"only spaces", "  ", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseHex(tc.in)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	var he *hexError
	_, err := parseHex("70zz")
	require.ErrorAs(t, err, &he)
	assert.Equal(t, 2, he.Offset)
	_, err = parseHex(" ")
	require.ErrorIs(t, err, errEmptyPayload)
}

func TestParsePayload(t *testing.T) {
	cases := []struct {
		spec string
		want []byte
		err  bool
	}{
		{"text:pong", []byte("pong"), false},
		{"pong", []byte("pong"), false},
		{"hex:706f6e67", []byte("pong"), false},
		{"base64:cG9uZw==", []byte("pong"), false},
		{"base64:!!", nil, true},
		{"hex:7", nil, true},
		{"text:", nil, true},
		{"", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			p, err := parsePayload(tc.spec)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			b, err := p.decode()
			require.NoError(t, err)
			assert.Equal(t, tc.want, b)
			back, err := parsePayload(p.String())
			require.NoError(t, err)
			assert.Equal(t, p, back)
		})
	}
}

func TestPayloadBytes(t *testing.T) {
	cases := []struct {
		name string
		p    Payload
		err  bool
	}{
		{"text", textPayload("a"), false},
		{"untyped text", Payload{Text: "a"}, false},
		{"binary", binaryPayload([]byte{0}), false},
		{"hex", hexPayload("00"), false},
		{"unknown type", Payload{Type: "Base32", Text: "a"}, true},
		{"text with hex set", Payload{Type: PayloadText, Text: "a", Hex: "00"}, true},
		{"hex with text set", Payload{Type: PayloadHex, Text: "a", Hex: "00"}, true},
		{"binary with text set", Payload{Type: PayloadBinary, Text: "a", Binary: []byte{1}}, true},
		{"empty", Payload{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if tc.err {
				require.ErrorIs(t, err, ErrInvalidPayload)
				var fe *FieldError
				require.ErrorAs(t, err, &fe)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

func TestSegmentsJSON(t *testing.T) {
	var s Segments
	require.NoError(t, json.Unmarshal([]byte(`{"type":"Text","text":"pong"}`), &s))
	assert.Equal(t, Segments{textPayload("pong")}, s)
	require.NoError(t, json.Unmarshal([]byte(`[{"type":"Binary","binary":"cG9uZw=="},{"type":"Hex","hex":"00"}]`), &s))
	assert.Equal(t, Segments{{Type: PayloadBinary, Binary: []byte("pong")}, hexPayload("00")}, s)
	require.Error(t, json.Unmarshal([]byte(`"pong"`), &s))
}

func TestMatchSegments(t *testing.T) {
	segs := func(s ...string) [][]byte {
		var out [][]byte
		for _, x := range s {
			out = append(out, []byte(x))
		}
		return out
	}
	cases := []struct {
		name string
		segs [][]byte
		in   string
		want bool
	}{
		{"Envoy rule 8: one segment", segs("ok"), "all ok", true},
		{"Envoy rule 8: ordered, not contiguous", segs("a", "c"), "abc", true},
		{"Envoy rule 8: out of order", segs("c", "a"), "abc", false},
		{"Envoy rule 8: the next search starts after the previous match", segs("aa", "a"), "aa", false},
		{"Envoy rule 8: overlapping occurrences", segs("aba", "ba"), "ababa", true},
		{"no segments match anything", nil, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, matchSegments(tc.segs, []byte(tc.in)))
		})
	}
}

// TestSegMatcherPieces checks that feeding a stream in any pieces gives
// the same answer as a one-shot search of the whole stream (a reference
// written with bytes.Index).
func TestSegMatcherPieces(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alpha := rapid.SampledFrom([]byte("ab"))
		data := rapid.SliceOfN(alpha, 0, 40).Draw(t, "data")
		segs := rapid.SliceOfN(rapid.SliceOfN(alpha, 1, 4), 1, 4).Draw(t, "segs")
		want := true
		rest := data
		for _, s := range segs {
			i := bytes.Index(rest, s)
			if i < 0 {
				want = false
				break
			}
			rest = rest[i+len(s):]
		}
		var m segMatcher
		m.reset(segs)
		got := false
		for len(data) > 0 && !got {
			n := rapid.IntRange(1, len(data)).Draw(t, "piece")
			got = m.feed(data[:n])
			data = data[n:]
		}
		if got != want {
			t.Fatalf("matcher %v, reference %v", got, want)
		}
	})
}

func FuzzParseHex(f *testing.F) {
	for _, s := range []string{"706f6e67", "70 6F", "7", "zz", "", " \t\r\n00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseHex(s)
		if err != nil {
			return
		}
		clean := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, s)
		want, err := hex.DecodeString(clean)
		if err != nil || !bytes.Equal(b, want) {
			t.Fatalf("parseHex(%q) = %x, encoding/hex says %x (%v)", s, b, want, err)
		}
	})
}

func FuzzParsePayload(f *testing.F) {
	for _, s := range []string{"text:pong", "hex:706f", "base64:cG9uZw==", "pong", "hex:", "base64:*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePayload(s)
		if err != nil {
			return
		}
		b, err := p.decode()
		if err != nil || len(b) == 0 {
			t.Fatalf("parsePayload(%q) accepted a payload that does not decode: %v", s, err)
		}
		back, err := parsePayload(p.String())
		if err != nil {
			t.Fatalf("String form %q does not parse back: %v", p.String(), err)
		}
		b2, _ := back.decode()
		if !bytes.Equal(b, b2) {
			t.Fatalf("round trip changed the bytes: %x → %x", b, b2)
		}
	})
}

func TestPayloadValidateMessage(t *testing.T) {
	assert.EqualError(t, Payload{}.Validate(), `probe: invalid payload: payload = "text:": allowed a payload of at least one byte, its type's field only (payload is empty)`)
}
