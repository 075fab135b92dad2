package heartbeat

import (
	"strings"
	"testing"
	"time"
)

func fuzzSeeds(f *testing.F) {
	kr := mustKeyring(f, testKey)
	b := Beat{Cluster: "eu-1", Region: "europe", Time: time.UnixMilli(1795964400000), Gateways: 3}
	signed, _ := kr.Seal(Global, b)
	b.SelfHeal = true
	healed, _ := kr.Seal(Local, b)
	b.Total, b.SelfHeal = 4, false
	signed2, _ := kr.Seal(Global, b)
	b.SelfHeal = true
	healed2, _ := kr.Seal(Local, b)
	for _, s := range []string{
		"", "v=gslb1", "v=gslb1;c=a;r=b;t=0", "v=gslb1;c=a;r=b;t=1;g=1;h=1",
		signed, healed, signed[:len(signed)-3], strings.ToUpper(signed),
		"v=gslb1;c=a;r=b;t=1;k=k1;m=" + strings.Repeat("A", 43),
		"v=gslb2;c=a", "\"v=gslb1;c=a;r=b;t=1\"", strings.Repeat("v=gslb1;", 40),
		// Format version 2: the gateway summary.
		"v=gslb2;c=a;r=b;t=1;g=0;n=1", "v=gslb2;c=a;r=b;t=1;g=65535;n=65535;h=1",
		"v=gslb2;c=a;r=b;t=1;g=2;n=1", "v=gslb2;c=a;r=b;t=1;n=1", "v=gslb1;c=a;r=b;t=1;g=1;n=2",
		signed2, healed2, signed2[:len(signed2)-3], strings.Replace(signed2, "v=gslb2", "v=gslb1", 1),
		"v=gslb2;c=a;r=b;t=1;g=1;n=1;k=k1;m=" + strings.Repeat("A", 43), strings.Repeat("v=gslb2;", 40),
	} {
		f.Add(s)
	}
}

// FuzzParseBeat: ParseBeat never panics; whatever it accepts is within
// limits and re-encodes to a value that parses to the same beat.
func FuzzParseBeat(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBeat(s)
		if err != nil {
			return
		}
		if len(s) > MaxBeatLen {
			t.Fatalf("accepted %d bytes", len(s))
		}
		if b.Validate() != nil {
			t.Fatalf("accepted an invalid beat %+v from %q", b, s)
		}
		text, err := b.MarshalText()
		if err != nil {
			t.Fatalf("re-encode %+v: %v", b, err)
		}
		again, err := ParseBeat(string(text))
		if err != nil {
			t.Fatalf("re-parse %q: %v", text, err)
		}
		b.KeyID = ""
		b.Cluster = strings.ToLower(b.Cluster)
		if again != b {
			t.Fatalf("round trip: %+v != %+v", again, b)
		}
	})
}

// FuzzOpen: the verifier never panics and, with a key set, never accepts
// an unsigned beat, nor a signed one that is not exactly what the keyring
// itself would seal.
func FuzzOpen(f *testing.F) {
	fuzzSeeds(f)
	kr := mustKeyring(f, testKey)
	f.Fuzz(func(t *testing.T, s string) {
		for _, scope := range []Scope{Local, Global} {
			b, err := kr.Open(scope, s)
			if err != nil {
				continue
			}
			if b.KeyID != testKey.ID || !strings.Contains(s, ";m=") {
				t.Fatalf("accepted an unsigned or foreign beat %q", s)
			}
			if b.Cluster == strings.ToLower(b.Cluster) {
				again, err := kr.Seal(scope, b)
				if err != nil || again != s {
					t.Fatalf("accepted %q, but the keyring seals %q (%v)", s, again, err)
				}
			}
		}
	})
}
