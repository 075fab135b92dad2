package testdnssec

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/internal/testproc"
)

// RequireEnv is the environment variable that makes a missing tool a test
// failure instead of a skip.
const RequireEnv = "GSLBKIT_REQUIRE_DNSSEC_TOOLS"

// packages names the Debian package of each tool this package runs.
var packages = map[string]string{
	"named":            "bind9",
	"dnssec-keygen":    "bind9-utils",
	"dnssec-signzone":  "bind9-utils",
	"delv":             "bind9-dnsutils",
	"unbound":          "unbound",
	"unbound-control":  "unbound",
	"knotd":            "knot",
	"knotc":            "knot",
	"dig":              "bind9-dnsutils",
	"kzonecheck":       "knot-dnssecutils",
	"ldns-verify-zone": "ldnsutils",
}

// Require returns the paths of tools, in order; where one is missing the
// test is skipped (or fails when GSLBKIT_REQUIRE_DNSSEC_TOOLS=1).
func Require(t testing.TB, tools ...string) []string {
	t.Helper()
	paths := make([]string, len(tools))
	for i, name := range tools {
		paths[i] = testproc.Require(t, RequireEnv,
			fmt.Sprintf("testdnssec: %s is not installed; apt-get install -y %s to run this test", name, packages[name]), name)
	}
	return paths
}

// Key is a key pair made by dnssec-keygen: Base is the path of its files
// without the .key/.private suffix.
type Key struct {
	Zone   string
	Base   string
	DNSKEY *dns.DNSKEY
}

// KSK reports whether the key has the SEP flag (257).
func (k *Key) KSK() bool { return k.DNSKEY.Flags&dns.SEP != 0 }

// DS returns the key's DS record (SHA-256).
func (k *Key) DS() *dns.DS { return k.DNSKEY.ToDS(dns.SHA256) }

// KeyGen makes a key for zone in dir with dnssec-keygen: algorithm 13
// (ECDSA P-256), a KSK (flags 257) when ksk is true.
func KeyGen(t testing.TB, dir, zone string, ksk bool) *Key {
	t.Helper()
	bin := Require(t, "dnssec-keygen")[0]
	args := []string{"-q", "-K", dir, "-a", "ECDSAP256SHA256", "-n", "ZONE"}
	if ksk {
		args = append(args, "-f", "KSK")
	}
	out, err := exec.Command(bin, append(args, dns.Fqdn(zone))...).Output()
	if err != nil {
		t.Fatalf("testdnssec: dnssec-keygen: %v", err)
	}
	base := filepath.Join(dir, strings.TrimSpace(string(out)))
	k, err := ReadKey(base)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// ReadKey reads the public half of a BIND key (base + ".key").
func ReadKey(base string) (*Key, error) {
	b, err := os.ReadFile(base + ".key")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, ";") || strings.TrimSpace(line) == "" {
			continue
		}
		rr, err := dns.NewRR(line)
		if err != nil {
			return nil, fmt.Errorf("testdnssec: %s.key: %w", base, err)
		}
		if k, ok := rr.(*dns.DNSKEY); ok {
			return &Key{Zone: k.Hdr.Name, Base: base, DNSKEY: k}, nil
		}
	}
	return nil, fmt.Errorf("testdnssec: %s.key holds no DNSKEY", base)
}

// Zone is a zone to pre-sign with dnssec-signzone.
type Zone struct {
	// Name is the zone's apex, fully qualified.
	Name string
	// Text is the zone's records in master-file format, relative to Name,
	// without DNSKEY records (Publish and Sign add them). The SOA serial
	// may be written as SERIAL: Sign puts a fresh one there.
	Text string
	// Sign are the keys that sign: the KSKs sign the DNSKEY set, the
	// others every set (a zone with only KSKs is signed with them alone).
	Sign []*Key
	// Publish are keys published in the DNSKEY set without signing.
	Publish []*Key
	// Inception and Expiration bound the signatures; zero means one hour
	// ago and one hour from now.
	Inception, Expiration time.Time
}

// Sign writes the zone, signed by dnssec-signzone (NSEC), into path.
// Verification after signing is turned off when the signatures are not
// valid now, so a test can serve a deliberately broken zone.
func (z *Zone) SignTo(t testing.TB, path string, serial uint32) {
	t.Helper()
	bin := Require(t, "dnssec-signzone")[0]
	inc, exp := z.Inception, z.Expiration
	now := time.Now()
	if inc.IsZero() {
		inc = now.Add(-time.Hour)
	}
	if exp.IsZero() {
		exp = now.Add(time.Hour)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "$ORIGIN %s\n$TTL 30\n", dns.Fqdn(z.Name))
	b.WriteString(strings.ReplaceAll(z.Text, "SERIAL", fmt.Sprint(serial)))
	b.WriteString("\n")
	only := true
	for _, k := range z.Sign {
		only = only && k.KSK()
	}
	for _, k := range append(append([]*Key(nil), z.Sign...), z.Publish...) {
		b.WriteString(k.DNSKEY.String() + "\n")
	}
	unsigned := path + ".unsigned"
	if err := os.WriteFile(unsigned, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const layout = "20060102150405"
	args := []string{"-q", "-o", dns.Fqdn(z.Name), "-f", path,
		"-s", inc.UTC().Format(layout), "-e", exp.UTC().Format(layout), "-j", "0"}
	if only {
		args = append(args, "-z")
	}
	if now.Before(inc) || now.After(exp) {
		args = append(args, "-P")
	}
	args = append(args, unsigned)
	for _, k := range z.Sign {
		args = append(args, k.Base)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testdnssec: dnssec-signzone %s: %v\n%s\n%s", z.Name, err, out, b.String())
	}
}
