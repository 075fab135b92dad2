package zoneops

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestQuoteTXT(t *testing.T) {
	cases := []struct{ name, text, wire string }{
		{"empty", "", `""`},
		{"spaces", "a b", `"a b"`},
		{"quotes", `"q"`, `"\"q\""`},
		{"backslash", `a\b`, `"a\\b"`},
		{"utf8", "ä", `"\195\164"`},
		{"long", strings.Repeat("x", 256), `"` + strings.Repeat("x", 255) + `" "x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.wire, QuoteTXT(c.text))
			assert.Equal(t, c.text, UnquoteTXT(c.wire))
		})
	}
	assert.Equal(t, "bare", UnquoteTXT("bare"))
}

// FuzzQuoteTXT: any text survives quoting; unquoting any input never panics.
func FuzzQuoteTXT(f *testing.F) {
	for _, s := range []string{"", "a", `"`, `\`, `\999`, `\25`, "\xff", `" "`, strings.Repeat("b", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		_ = UnquoteTXT(text)
		if got := UnquoteTXT(QuoteTXT(text)); got != text {
			t.Fatalf("round trip of %q gave %q", text, got)
		}
	})
}

func TestQuoteTXTOctalForRoute53(t *testing.T) {
	text := "a\"b\\c\x01\xff"
	q := QuoteTXTEscaped(text, Octal)
	if q != `"a\"b\\c\001\377"` {
		t.Fatalf("octal quoting: %s", q)
	}
	if got := UnquoteTXTEscaped(q, Octal); got != text {
		t.Fatalf("octal round trip: %q", got)
	}
	if got := UnquoteTXTEscaped(`\052.example.com.`, Octal); got != "*.example.com." {
		t.Fatalf("octal name: %q", got)
	}
	if QuoteTXTEscaped(text, Decimal) != QuoteTXT(text) {
		t.Fatal("Decimal is QuoteTXT")
	}
}
