package record

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

// plainNameRef is plainName written byte by byte, the reference the word
// at a time version must agree with.
func plainNameRef(name string) bool {
	if name == "" || name[len(name)-1] == '.' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c >= 'A' && c <= 'Z') || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			return false
		}
	}
	return true
}

// canonicalIPv4Ref says what canonicalIPv4 must: ParseAddr takes v as an
// IPv4 address and formats it back unchanged.
func canonicalIPv4Ref(v string) bool {
	ip, err := netip.ParseAddr(v)
	return err == nil && ip.Is4() && ip.String() == v
}

func TestPlainName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"", false},
		{"www", true},
		{"www.", false},
		{"@", true},
		{"Www", false},
		{"svc-00001", true},
		{"_gslb-owner.svc-00001", true},
		{"_gslb-owner.svc-0000Z", false},
		{"_gslb-owner.Svc-00001", false},
		{"a-long-name-with a-space", false},
		{"tab\tinside-a-long-name", false},
		{"a-long-name-ending-in-cr\r", false},
		{"nl\n", false},
		{"control\x01bytes-are-fine-here", true},
		{"\x7fdel-and-high-bytes-\xc3\x9f\xff-are-fine", true},
		{"utf8-caps-\xc3\x84-are-not-ascii", true},
		{"0123456789abcdef", true},
		{"0123456789abcdeF", false},
		{"[\\]^_`{|}~@?>=<;:/.-,+*)(!", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, plainNameRef(tt.name), "reference")
			assert.Equal(t, tt.want, plainName(tt.name))
		})
	}
}

// TestPlainNameProperty checks the word at a time plainName against the
// byte by byte reference on strings made of the bytes that matter.
func TestPlainNameProperty(t *testing.T) {
	alphabet := []byte("aZAz@[`{ \t\n\r\v\x00\x01\x1f!\x7f\x80\xc1\xdb\xfa\xff.-_09")
	rapid.Check(t, func(t *rapid.T) {
		bs := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 40).Draw(t, "bytes")
		name := string(bs)
		if got, want := plainName(name), plainNameRef(name); got != want {
			t.Fatalf("plainName(%q) = %v, reference %v", name, got, want)
		}
	})
	// Every byte value at every position of names of every length up to 17.
	for n := 1; n <= 17; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := []byte(strings.Repeat("a", n))
				b[pos] = byte(c)
				name := string(b)
				if got, want := plainName(name), plainNameRef(name); got != want {
					t.Fatalf("plainName(%q) = %v, reference %v", name, got, want)
				}
			}
		}
	}
}

func TestCanonicalIPv4(t *testing.T) {
	tests := []string{
		"0.0.0.0", "1.2.3.4", "255.255.255.255", "10.0.0.1", "192.0.2.1", "100.200.250.255",
		"256.1.1.1", "1.2.3.256", "01.2.3.4", "1.2.3.04", "1.2.3.00", "1.2.3", "1.2.3.4.5",
		"1..3.4", ".1.2.3", "1.2.3.", " 1.2.3.4", "1.2.3.4 ", "1.2.3.4%eth0", "::1",
		"::ffff:1.2.3.4", "1.2.3.1000", "1234.1.1.1", "100.200.0", "100.200.0.", "100.0.200", "0.0.0.0.", "1.0.0.00", "1.2.3.4a", "", "a.b.c.d", "999.999.999.999",
	}
	for _, v := range tests {
		t.Run(v, func(t *testing.T) {
			assert.Equal(t, canonicalIPv4Ref(v), canonicalIPv4(v))
		})
	}
}

// TestCanonicalIPv4Property checks canonicalIPv4 against netip on strings
// made of digits and dots.
func TestCanonicalIPv4Property(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.StringMatching(`[0-9.:a ]{0,17}`).Draw(t, "v")
		if rapid.Bool().Draw(t, "dotted") {
			v = rapid.StringMatching(`[0-9]{0,4}(\.[0-9]{0,4}){0,4}`).Draw(t, "dotted")
		}
		if rapid.Bool().Draw(t, "quad") {
			var parts []string
			for i := 0; i < 4; i++ {
				parts = append(parts, rapid.StringMatching(`0?[0-9]{1,3}`).Draw(t, "field"))
			}
			v = strings.Join(parts, ".")
		}
		if got, want := canonicalIPv4(v), canonicalIPv4Ref(v); got != want {
			t.Fatalf("canonicalIPv4(%q) = %v, netip says %v", v, got, want)
		}
	})
}

// TestCanonicalIPv4Exhaustive compares canonicalIPv4 with netip on every
// string of up to 9 characters made of "0", "2", "5", "6" and ".".
func TestCanonicalIPv4Exhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const alphabet = "0256."
	buf := make([]byte, 0, 9)
	var walk func()
	walk = func() {
		v := string(buf)
		if got, want := canonicalIPv4(v), canonicalIPv4Ref(v); got != want {
			t.Fatalf("canonicalIPv4(%q) = %v, netip says %v", v, got, want)
		}
		if len(buf) == cap(buf) {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			buf = append(buf, alphabet[i])
			walk()
			buf = buf[:len(buf)-1]
		}
	}
	walk()
}

// TestAppendIPv4 checks appendIPv4 against netip for every value of each
// field.
func TestAppendIPv4(t *testing.T) {
	for x := 0; x < 256; x++ {
		for _, ip := range [][4]byte{{byte(x), 0, 0, 0}, {1, byte(x), 2, 3}, {255, 10, byte(x), 99}, {0, 100, 9, byte(x)}} {
			want := netip.AddrFrom4(ip).String()
			if got := string(appendIPv4(nil, ip)); got != want {
				t.Fatalf("appendIPv4(%v) = %q, want %q", ip, got, want)
			}
		}
	}
}
