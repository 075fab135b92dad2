package answer

import (
	"strings"
	"testing"
)

// TestStaticTextOK compares staticTextOK with a byte-by-byte test, for
// every byte at every position of names of every length up to 255.
func TestStaticTextOK(t *testing.T) {
	slow := func(s string, labels int) bool {
		for i := 0; i < len(s); i++ {
			if s[i] != '.' && !staticLabelByte(s[i]) {
				return false
			}
		}
		return strings.Count(s, ".") == labels
	}
	for l := 1; l <= 255; l++ {
		base := []byte(strings.Repeat("a", l-1) + ".")
		for _, pos := range []int{0, l / 2, l - 1} {
			for b := range 256 {
				var nb [256]byte
				copy(nb[:], base)
				nb[pos] = byte(b)
				for _, labels := range []int{1, 2} {
					if got, want := staticTextOK(&nb, l, labels), slow(string(nb[:l]), labels); got != want {
						t.Fatalf("length %d, byte %#x at %d, %d labels: %v, want %v", l, b, pos, labels, got, want)
					}
				}
			}
		}
	}
}

// TestLowerName compares lowerName with a byte-by-byte lowering, for every
// byte at every position of names of every length up to 255.
func TestLowerName(t *testing.T) {
	for l := 1; l <= 255; l++ {
		for _, pos := range []int{0, l / 3, l / 2, l - 1} {
			for b := range 256 {
				name := []byte(strings.Repeat("Ab", 128)[:l])
				name[pos] = byte(b)
				var key [300]byte
				if n := lowerName(&key, name); n != l {
					t.Fatalf("length %d: %d", l, n)
				}
				for i, c := range name {
					if 'A' <= c && c <= 'Z' {
						c += 'a' - 'A'
					}
					if key[i] != c {
						t.Fatalf("length %d, byte %#x at %d: byte %d is %#x, want %#x", l, b, pos, i, key[i], c)
					}
				}
			}
		}
	}
}
