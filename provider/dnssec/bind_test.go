package dnssec_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/internal/testproc"
	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// TestBINDKeyFiles reads key pairs dnssec-keygen (BIND 9.18) wrote.
func TestBINDKeyFiles(t *testing.T) {
	for _, c := range []struct {
		base string
		tag  uint16
		sep  bool
	}{{"Kexample.com.+013+29823", 29823, true}, {"Kexample.com.+015+19031", 19031, false}} {
		k, err := dnssec.ReadKeyFiles(filepath.Join("testdata", "bind", c.base+".private"))
		require.NoError(t, err, c.base)
		require.Equal(t, c.tag, k.Tag())
		require.Equal(t, c.sep, k.SEP())
		require.Equal(t, c.base, k.BaseName())
		s, err := dnssec.NewSigner("example.com", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}})
		require.NoError(t, err)
		set := rrs(t, "example.com. 60 IN A 192.0.2.1")
		sigs, err := s.Sign(set, t0)
		require.NoError(t, err)
		verify(t, sigs, s.DNSKEYs(), set, t0)
	}
}

// TestKeysReadByBIND: BIND's tools read the files WriteFiles writes:
// dnssec-dsfromkey computes the same DS, dnssec-signzone signs with the
// private key. Skipped without BIND's tools unless GSLBKIT_REQUIRE_BIND=1.
func TestKeysReadByBIND(t *testing.T) {
	const install = "apt-get install -y bind9-utils"
	dsfromkey := testproc.Require(t, "GSLBKIT_REQUIRE_BIND", "dnssec-dsfromkey is not installed ("+install+")", "dnssec-dsfromkey")
	signzone := testproc.Require(t, "GSLBKIT_REQUIRE_BIND", "dnssec-signzone is not installed ("+install+")", "dnssec-signzone")
	for _, alg := range []uint8{dnssec.ECDSAP256SHA256, dnssec.ED25519} {
		dir := t.TempDir()
		k := mustKey(t, alg, dnssec.FlagsKSK)
		base, err := k.WriteFiles(dir)
		require.NoError(t, err)
		out, err := exec.Command(dsfromkey, "-2", base+".key").CombinedOutput()
		require.NoError(t, err, "%s", out)
		ds, err := dns.NewRR(strings.TrimSpace(string(out)))
		require.NoError(t, err, "%s", out)
		require.Equal(t, strings.ToUpper(k.DS().Digest), ds.(*dns.DS).Digest)
		zone := "$TTL 60\nexample.com. IN SOA ns1.example.com. h.example.com. 1 60 60 600 30\nexample.com. IN NS ns1.example.com.\nns1.example.com. IN A 192.0.2.1\n$INCLUDE " + base + ".key\n"
		zf := filepath.Join(dir, "example.com.db")
		require.NoError(t, os.WriteFile(zf, []byte(zone), 0o644))
		cmd := exec.Command(signzone, "-z", "-o", "example.com.", "-K", dir, "-f", zf+".signed", zf, filepath.Base(base))
		cmd.Dir = dir
		out, err = cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		signed, err := os.ReadFile(zf + ".signed")
		require.NoError(t, err)
		require.Contains(t, string(signed), "RRSIG")
	}
}
