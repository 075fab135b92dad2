package dnssec_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func mustKey(t testing.TB, alg uint8, flags uint16) *dnssec.Key {
	t.Helper()
	k, err := dnssec.GenerateKey("example.com", alg, flags, 3600)
	require.NoError(t, err)
	return k
}

func rrs(t testing.TB, lines ...string) []dns.RR {
	t.Helper()
	var out []dns.RR
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		require.NoError(t, err)
		out = append(out, rr)
	}
	return out
}

func verify(t testing.TB, sigs []*dns.RRSIG, keys []dns.RR, set []dns.RR, now time.Time) {
	t.Helper()
	require.NotEmpty(t, sigs)
	for _, sig := range sigs {
		var ok bool
		for _, k := range keys {
			k := k.(*dns.DNSKEY)
			if k.KeyTag() == sig.KeyTag && k.Algorithm == sig.Algorithm {
				require.NoError(t, sig.Verify(k, set), "sig %s", sig)
				ok = true
			}
		}
		require.True(t, ok, "no DNSKEY for %s", sig)
		require.True(t, sig.ValidityPeriod(now), "validity of %s at %s", sig, now)
	}
}

func TestSignVerifyAlgorithms(t *testing.T) {
	for _, alg := range []uint8{dnssec.ECDSAP256SHA256, dnssec.ED25519} {
		t.Run(dns.AlgorithmToString[alg], func(t *testing.T) {
			k := mustKey(t, alg, dnssec.FlagsKSK)
			s, err := dnssec.NewSigner("Example.COM", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}})
			require.NoError(t, err)
			set := rrs(t, "www.example.com. 60 IN A 192.0.2.1", "www.example.com. 60 IN A 192.0.2.2")
			sigs, err := s.Sign(set, t0)
			require.NoError(t, err)
			verify(t, sigs, s.DNSKEYs(), set, t0)
			require.Equal(t, uint32(t0.Add(-time.Hour).Unix()), sigs[0].Inception)
			require.Equal(t, uint32(t0.Add(7*24*time.Hour).Unix()), sigs[0].Expiration)
			// The same set in another order, with a duplicate: a cache hit.
			again, err := s.Sign([]dns.RR{set[1], set[0], set[1]}, t0.Add(time.Minute))
			require.NoError(t, err)
			require.Same(t, sigs[0], again[0])
			st := s.Stats()
			require.Equal(t, uint64(1), st.Made)
			require.Equal(t, uint64(1), st.Hits)
			require.Equal(t, 1, st.Entries)
			// The DNSKEY set is signed by the SEP key.
			ks, err := s.Sign(s.DNSKEYs(), t0)
			require.NoError(t, err)
			verify(t, ks, s.DNSKEYs(), s.DNSKEYs(), t0)
		})
	}
}

func TestSignWildcard(t *testing.T) {
	k := mustKey(t, dnssec.ECDSAP256SHA256, dnssec.FlagsKSK)
	s, err := dnssec.NewSigner("example.com.", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}})
	require.NoError(t, err)
	sigs, err := s.Sign(rrs(t, "*.w.example.com. 60 IN A 192.0.2.1"), t0)
	require.NoError(t, err)
	require.Equal(t, uint8(3), sigs[0].Labels)
	// Expanded at a.b.w.example.com., the same signature verifies.
	sig := dns.Copy(sigs[0]).(*dns.RRSIG)
	sig.Hdr.Name = "a.b.w.example.com."
	verify(t, []*dns.RRSIG{sig}, s.DNSKEYs(), rrs(t, "a.b.w.example.com. 60 IN A 192.0.2.1"), t0)
}

func TestRefreshAndBudget(t *testing.T) {
	k := mustKey(t, dnssec.ECDSAP256SHA256, dnssec.FlagsKSK)
	s, err := dnssec.NewSigner("example.com.", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}},
		Validity: 4 * time.Hour, Refresh: time.Hour, SignaturesPerSecond: 2})
	require.NoError(t, err)
	set := rrs(t, "a.example.com. 60 IN A 192.0.2.1")
	first, err := s.Sign(set, t0)
	require.NoError(t, err)
	// Before the refresh point: cached. After it: a new signature.
	got, err := s.Sign(set, t0.Add(3*time.Hour-time.Second))
	require.NoError(t, err)
	require.Same(t, first[0], got[0])
	got, err = s.Sign(set, t0.Add(3*time.Hour))
	require.NoError(t, err)
	require.NotSame(t, first[0], got[0])
	verify(t, got, s.DNSKEYs(), set, t0.Add(3*time.Hour))
	// The budget: 2 a second, with a burst of 2.
	now := t0.Add(4 * time.Hour)
	var over int
	for i := range 5 {
		_, err := s.Sign(rrs(t, fmt.Sprintf("n%d.example.com. 60 IN A 192.0.2.1", i)), now)
		if errors.Is(err, dnssec.ErrOverBudget) {
			over++
		}
	}
	require.Equal(t, 3, over)
	require.Equal(t, uint64(3), s.Stats().OverBudget)
	// Over budget, a signature due for refresh is served while valid.
	s2, err := dnssec.NewSigner("example.com.", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}},
		Validity: 4 * time.Hour, Refresh: time.Hour, SignaturesPerSecond: 1})
	require.NoError(t, err)
	a := rrs(t, "a.example.com. 60 IN A 192.0.2.1")
	old, err := s2.Sign(a, t0)
	require.NoError(t, err)
	due := t0.Add(3 * time.Hour)
	_, err = s2.Sign(rrs(t, "x.example.com. 60 IN A 192.0.2.1"), due) // spends the budget
	require.NoError(t, err)
	got, err = s2.Sign(a, due)
	require.NoError(t, err)
	require.Same(t, old[0], got[0])
	require.Equal(t, uint64(1), s2.Stats().Deferred)
	require.True(t, got[0].ValidityPeriod(due))
	_, err = s.Sign(rrs(t, "late.example.com. 60 IN A 192.0.2.1"), now.Add(time.Second))
	require.NoError(t, err)
}

func TestCacheBounded(t *testing.T) {
	k := mustKey(t, dnssec.ED25519, dnssec.FlagsKSK)
	s, err := dnssec.NewSigner("example.com.", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}, CacheEntries: 64, CacheBytes: 8192})
	require.NoError(t, err)
	for i := range 500 {
		_, err := s.Sign(rrs(t, fmt.Sprintf("n%d.example.com. 60 IN A 192.0.2.1", i)), t0)
		require.NoError(t, err)
		st := s.Stats()
		require.LessOrEqual(t, st.Entries, 64)
		require.LessOrEqual(t, st.Bytes, 8192)
	}
	require.NotZero(t, s.Stats().Evicted)
}

func TestKeyFilesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, alg := range []uint8{dnssec.ECDSAP256SHA256, dnssec.ED25519} {
		k := mustKey(t, alg, dnssec.FlagsZSK)
		base, err := k.WriteFiles(dir)
		require.NoError(t, err)
		fi, err := os.Stat(base + ".private")
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		_, err = k.WriteFiles(dir)
		require.Error(t, err, "no overwrite")
		got, err := dnssec.ReadKeyFiles(base + ".private")
		require.NoError(t, err)
		require.Equal(t, k.DNSKEY().String(), got.DNSKEY().String())
		require.Equal(t, k.Tag(), got.Tag())
		require.True(t, strings.HasPrefix(filepath.Base(base), "Kexample.com.+0"))
	}
}

func TestKeyNeverPrinted(t *testing.T) {
	k := mustKey(t, dnssec.ECDSAP256SHA256, dnssec.FlagsKSK)
	dir := t.TempDir()
	base, err := k.WriteFiles(dir)
	require.NoError(t, err)
	b, err := os.ReadFile(base + ".private")
	require.NoError(t, err)
	var secret string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "PrivateKey:") {
			secret = strings.TrimSpace(strings.TrimPrefix(l, "PrivateKey:"))
		}
	}
	require.NotEmpty(t, secret)
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s %q %x", k, k, k, k, k, k), k.String(), k.GoString(),
		fmt.Sprintf("%v", dnssec.ZoneKey{Key: k}), fmt.Sprintf("%+v", []*dnssec.Key{k})} {
		require.NotContains(t, s, secret)
		require.Contains(t, s, "tag")
	}
}

func TestSubsets(t *testing.T) {
	k := mustKey(t, dnssec.ECDSAP256SHA256, dnssec.FlagsKSK)
	s, err := dnssec.NewSigner("example.com.", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}})
	require.NoError(t, err)
	require.Equal(t, time.Hour, s.Reuse())
	set := rrs(t, "geo.example.com. 60 IN A 192.0.2.1", "geo.example.com. 60 IN A 192.0.2.2", "geo.example.com. 60 IN A 192.0.2.3")
	sub := s.NewSubsets(set)
	require.NotNil(t, sub)
	// A message holding the question and the packed RRSIGs of {1, 3}.
	q := new(dns.Msg)
	q.SetQuestion("geo.example.com.", dns.TypeA)
	head, err := q.Pack()
	require.NoError(t, err)
	out, n, ok := sub.AppendPacked(head, 0b101, t0)
	require.True(t, ok)
	require.Equal(t, 1, n)
	out[7] = byte(n) // ANCOUNT
	m := new(dns.Msg)
	require.NoError(t, m.Unpack(out))
	sig := m.Answer[0].(*dns.RRSIG)
	require.Equal(t, "geo.example.com.", sig.Hdr.Name)
	verify(t, []*dns.RRSIG{sig}, s.DNSKEYs(), []dns.RR{set[0], set[2]}, t0)
	again, _, _ := sub.AppendPacked(nil, 0b101, t0.Add(time.Minute))
	require.Equal(t, out[len(head):], again, "reused")
	require.Equal(t, uint64(1), s.Stats().Made)
	// New keys: signed again, with the new key.
	k2 := mustKey(t, dnssec.ED25519, dnssec.FlagsKSK)
	require.NoError(t, s.SetKeys([]dnssec.ZoneKey{{Key: k2}}))
	third, _, ok := sub.AppendPacked(nil, 0b101, t0.Add(2*time.Minute))
	require.True(t, ok)
	require.NotEqual(t, again, third)
	require.Nil(t, s.NewSubsets(nil))
}

func TestParsePEMKey(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	for _, priv := range []any{ec, ed} {
		der, err := x509.MarshalPKCS8PrivateKey(priv)
		require.NoError(t, err)
		k, err := dnssec.ParsePEMKey("example.com", dnssec.FlagsKSK, 3600, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
		require.NoError(t, err)
		s, err := dnssec.NewSigner("example.com", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}})
		require.NoError(t, err)
		set := rrs(t, "example.com. 60 IN TXT x")
		sigs, err := s.Sign(set, t0)
		require.NoError(t, err)
		verify(t, sigs, s.DNSKEYs(), set, t0)
	}
	_, err = dnssec.ParsePEMKey("example.com", dnssec.FlagsKSK, 3600, []byte("not pem"))
	require.ErrorIs(t, err, dnssec.ErrKey)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	der, _ := x509.MarshalPKCS8PrivateKey(p384)
	_, err = dnssec.ParsePEMKey("example.com", dnssec.FlagsKSK, 3600, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	require.ErrorIs(t, err, dnssec.ErrKey)
}
