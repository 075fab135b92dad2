package testdnssec

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// DelvResult is delv's verdict on one query.
type DelvResult struct {
	// Status is delv's verdict line without its leading "; ": "fully
	// validated", "negative response, fully validated", "unsigned answer",
	// or, when resolution failed, the ";; resolution failed: …" text.
	Status string
	// Validated is true for "fully validated" and "negative response,
	// fully validated".
	Validated bool
	// Negative is true for a validated negative response (NXDOMAIN or
	// NODATA).
	Negative bool
	// Output is all delv printed (+vtrace: every validation step).
	Output string
}

// ParseDelv reads delv's output. delv prints ";; resolution failed:
// ncache nxdomain" (or nxrrset) before the verdict of a negative answer, so
// a verdict line, when there is one, wins.
func ParseDelv(out string) DelvResult {
	r := DelvResult{Output: out}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, ";; resolution failed") && r.Status == "":
			r.Status = strings.TrimPrefix(line, ";; ")
		case strings.HasPrefix(line, "; ") && (strings.HasSuffix(line, "validated") || strings.HasSuffix(line, "unsigned answer")):
			r.Status = strings.TrimPrefix(line, "; ")
			r.Validated = strings.HasSuffix(r.Status, "fully validated")
			r.Negative = r.Validated && strings.HasPrefix(r.Status, "negative response")
			return r
		}
	}
	return r
}

// Delv runs delv against the non-validating unbound (its recursive
// resolver; delv validates on its own) with the validator's trust anchors
// and the anchors' owner as root.
func (v *Validator) Delv(t testing.TB, name string, qtype uint16) DelvResult {
	t.Helper()
	host, port, _ := strings.Cut(v.PlainAddr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	args := []string{"@" + host, "-p", port, "-a", filepath.Join(v.Dir, "delv.anchor"),
		"+root=" + v.root, "+vtrace", "+tcp", dns.Fqdn(name), dns.TypeToString[qtype]}
	out, err := exec.CommandContext(ctx, v.delv, args...).CombinedOutput()
	r := ParseDelv(string(out))
	if r.Status == "" && err != nil {
		t.Fatalf("testdnssec: delv %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return r
}
