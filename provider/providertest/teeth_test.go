package providertest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
)

// broken wraps the reference provider with one classic libdns bug.
type broken struct {
	*refProvider
	bug string
}

func (b broken) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if b.bug == "set-appends" {
		return b.refProvider.AppendRecords(ctx, zone, recs)
	}
	return b.refProvider.SetRecords(ctx, zone, recs)
}

func (b broken) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	recs, err := b.refProvider.GetRecords(ctx, zone)
	if b.bug == "txt-strips-quotes" {
		for i, r := range recs {
			if t, ok := r.(libdns.TXT); ok {
				t.Text = strings.Trim(t.Text, `"`)
				recs[i] = t
			}
		}
	}
	return recs, err
}

func (b broken) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if b.bug == "no-wildcards" {
		var exact []libdns.Record
		for _, r := range recs {
			if rr := r.RR(); rr.Type != "" && rr.Data != "" {
				exact = append(exact, r)
			}
		}
		recs = exact
	}
	return b.refProvider.DeleteRecords(ctx, zone, recs)
}

// TestBrokenProviderHelper runs the suite on a broken provider; it only
// does so in the child process TestSuiteHasTeeth starts.
func TestBrokenProviderHelper(t *testing.T) {
	bug := os.Getenv("GSLBKIT_PROVIDERTEST_BUG")
	if bug == "" {
		t.Skip("run by TestSuiteHasTeeth")
	}
	providertest.Run(t, broken{refProvider: &refProvider{}, bug: bug}, "example.test.", providertest.Capabilities{})
}

// The suite catches bugs real libdns providers have had: SetRecords that
// appends, TXT reads that strip quotes at the ends, DeleteRecords without
// wildcards. Each runs in a child test process that must fail in the
// expected subtest.
func TestSuiteHasTeeth(t *testing.T) {
	if os.Getenv("GSLBKIT_PROVIDERTEST_BUG") != "" {
		t.Skip("child process")
	}
	cases := []struct{ bug, failing string }{
		{"set-appends", "SetRecords/ReplacesOnlyGivenPairs"},
		{"txt-strips-quotes", "TXT/quotes"},
		{"no-wildcards", "DeleteRecords/ValueWildcard"},
	}
	for _, c := range cases {
		t.Run(c.bug, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenProviderHelper$", "-test.v")
			cmd.Env = append(os.Environ(), "GSLBKIT_PROVIDERTEST_BUG="+c.bug)
			out, err := cmd.CombinedOutput()
			assert.Error(t, err, "the suite passed a provider with bug %s", c.bug)
			assert.Contains(t, string(out), "--- FAIL: TestBrokenProviderHelper/"+c.failing)
		})
	}
}
