package record

import "testing"

// FuzzParseFence: a fence's text is read from the zone (anyone with write
// access to it may have written it); parsing never panics, and what it
// accepts writes back to text that parses the same.
func FuzzParseFence(f *testing.F) {
	for _, s := range []string{"deploy 1 0", "deploy-eu 18446744073709551615 3", "", " ", "a b c", "a 1", "a 1 2 3", " 1 2", "a -1 2", "a 01 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		owner, token, seq, ok := parseFence(text)
		if !ok {
			return
		}
		o2, t2, s2, ok2 := parseFence(fenceValue(owner, token, seq))
		if !ok2 || o2 != owner || t2 != token || s2 != seq {
			t.Fatalf("%q: parsed (%q, %d, %d), written back parses (%q, %d, %d, %v)", text, owner, token, seq, o2, t2, s2, ok2)
		}
	})
}
