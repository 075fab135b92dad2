package rfc2136

import (
	"github.com/gslbkit/gslb/internal/zoneops"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wire packs a TXT record built from text and unpacks it again, the way
// the text travels to the server and back in a transfer.
func wire(t testing.TB, text string) []string {
	rr := &dns.TXT{Hdr: dns.RR_Header{Name: "x.example.test.", Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: txtStrings(text)}
	buf := make([]byte, dns.MaxMsgSize)
	n, err := dns.PackRR(rr, buf, 0, nil, false)
	require.NoError(t, err)
	back, _, err := dns.UnpackRR(buf[:n], 0)
	require.NoError(t, err)
	return back.(*dns.TXT).Txt
}

func TestTXTRoundTrip(t *testing.T) {
	cases := map[string]string{
		"empty":       "",
		"plain":       "hello",
		"quotes":      `say "hi"`,
		"backslashes": `a\b\\c\`,
		"ddd-like":    `\065 not an A`,
		"semicolon":   "a; b",
		"control":     "tab\there\x00nul\x7fdel",
		"utf8":        "exämple – ✓",
		"long":        strings.Repeat("é", 300),
		"edge":        strings.Repeat("x", 254) + `"\`,
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			ss := wire(t, text)
			for _, s := range txtStrings(text) {
				assert.LessOrEqual(t, len(zoneops.UnescapeTXT(s)), 255)
			}
			assert.Equal(t, text, joinTXT(ss))
		})
	}
}

// FuzzTXT checks that any text survives the trip through the wire and
// that unescaping arbitrary server data never panics.
func FuzzTXT(f *testing.F) {
	for _, s := range []string{"", "hello", `"q"`, `\\`, `\999`, `\12`, "\xff\x00", strings.Repeat("a", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		_ = zoneops.UnescapeTXT(text)
		if len(text) > 4000 {
			return
		}
		if got := joinTXT(wire(t, text)); got != text {
			t.Fatalf("round trip of %q gave %q", text, got)
		}
	})
}
