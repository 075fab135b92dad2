package zoneops

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseTXTStrings(t *testing.T) {
	long := strings.Repeat("z", 300)
	for _, c := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{`"first" "second"`, []string{"first", "second"}, true},
		{`"a"  	"b" c`, []string{"a", "b", "c"}, true},
		{`"say \"hi\"" "\\" "\001\255"`, []string{`say "hi"`, `\`, "\x01\xff"}, true},
		{`""`, []string{""}, true},
		{`"` + long + `"`, []string{long[:255], long[255:]}, true},
		{`"open`, nil, false},
		{`"a"b`, nil, false},
		{`  `, nil, false},
	} {
		got, ok := ParseTXTStrings(c.in)
		assert.Equal(t, c.ok, ok, c.in)
		assert.Equal(t, c.want, got, c.in)
		if ok {
			back, _ := ParseTXTStrings(FormatTXTStrings(got))
			assert.Equal(t, got, back, c.in)
		}
	}
	assert.Equal(t, `"a" "b"`, CanonicalTXT(`"a"   "b"`))
	assert.Equal(t, "one", CanonicalTXT(`"one"`))
	assert.Equal(t, "plain text", CanonicalTXT("plain text"))
}

// FuzzParseTXTStrings: what parses is written and parsed back to the same
// strings, none longer than 255 bytes.
func FuzzParseTXTStrings(f *testing.F) {
	for _, s := range []string{`"a" "b"`, `"\"" x`, `"\256"`, `"`, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ss, ok := ParseTXTStrings(s)
		if !ok {
			return
		}
		for _, x := range ss {
			if len(x) > 255 {
				t.Fatalf("string of %d bytes", len(x))
			}
		}
		back, ok := ParseTXTStrings(FormatTXTStrings(ss))
		if !ok || !slicesEqual(back, ss) {
			t.Fatalf("%q -> %q -> %q", s, ss, back)
		}
	})
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
