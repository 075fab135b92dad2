package route53

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gslbkit/gslb/internal/zoneops"
)

func TestTXTEncoding(t *testing.T) {
	cases := []struct {
		name, text, wire string
	}{
		{"empty", "", `""`},
		{"plain", "hello world", `"hello world"`},
		{"quotes", `"q"`, `"\"q\""`},
		{"backslash", `a\b`, `"a\\b"`},
		{"utf8", "ä", `"\303\244"`},
		{"control", "a\tb", `"a\011b"`},
		{"long", strings.Repeat("x", 256), `"` + strings.Repeat("x", 255) + `" "x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.wire, encodeTXT(c.text))
			assert.Equal(t, c.text, decodeTXT(c.wire))
		})
	}
	// Route 53 may return unquoted single words and names with escapes.
	assert.Equal(t, "word", decodeTXT("word"))
	assert.Equal(t, "*.example.test.", decodeName(`\052.Example.Test.`))
}

// FuzzTXT checks that any text survives encoding and decoding, that no
// encoded string exceeds 255 bytes, and that decoding arbitrary input
// from the API never panics.
func FuzzTXT(f *testing.F) {
	for _, s := range []string{"", "hello", `"q"`, `\\`, `\777`, `\12`, "\xff\x00", `" "`, strings.Repeat("a", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		_ = decodeTXT(text)
		_ = decodeName(text)
		wire := encodeTXT(text)
		if got := decodeTXT(wire); got != text {
			t.Fatalf("round trip of %q via %q gave %q", text, wire, got)
		}
		for _, s := range strings.Split(wire, `" "`) {
			if n := len(decodeTXT(`"` + strings.Trim(s, `"`) + `"`)); n > zoneops.MaxTXTString {
				t.Fatalf("string of %d bytes in %q", n, wire)
			}
		}
	})
}
