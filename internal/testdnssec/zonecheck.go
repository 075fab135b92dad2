package testdnssec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// Transfer fetches zone from addr by AXFR over TCP (unsigned request) and
// returns its records, the closing SOA left out, or the server's refusal
// as an error.
func Transfer(zone, addr string) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	ch, err := new(dns.Transfer).In(m, addr)
	if err != nil {
		return nil, err
	}
	var rrs []dns.RR
	for env := range ch {
		if env.Error != nil {
			return nil, env.Error
		}
		rrs = append(rrs, env.RR...)
	}
	if len(rrs) > 1 {
		rrs = rrs[:len(rrs)-1]
	}
	return rrs, nil
}

// CheckZone writes rrs, a transferred zone, to a file and checks its
// DNSSEC with kzonecheck (-d on) and ldns-verify-zone: every RRset signed
// by a key of the zone, signatures valid now, a complete NSEC chain. It
// returns nil when both accept the zone, else an error holding what each
// tool that refused it printed.
func CheckZone(t testing.TB, zone string, rrs []dns.RR) error {
	t.Helper()
	bins := Require(t, "kzonecheck", "ldns-verify-zone")
	var b strings.Builder
	for _, rr := range rrs {
		b.WriteString(rr.String() + "\n")
	}
	path := filepath.Join(t.TempDir(), strings.TrimSuffix(dns.Fqdn(zone), ".")+".zone")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var errs []error
	for _, args := range [][]string{
		{bins[0], "-v", "-o", dns.Fqdn(zone), "-d", "on", path},
		{bins[1], "-V", "2", path},
	} {
		out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w:\n%s", filepath.Base(args[0]), err, out))
		}
	}
	return errors.Join(errs...)
}
