package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/internal/testproc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sample is one series of a scrape.
type sample struct {
	name   string
	labels string // `{a="b",c="d"}` as exposed
	value  float64
}

// scrape reads the Prometheus text exposition at url.
func scrape(t *testing.T, url string) []sample {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out []sample
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		sp := strings.LastIndexByte(l, ' ')
		require.Positive(t, sp, "line %q", l)
		v, err := strconv.ParseFloat(l[sp+1:], 64)
		require.NoError(t, err, "line %q", l)
		name, labels := l[:sp], ""
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name, labels = name[:i], name[i:]
		}
		out = append(out, sample{name: name, labels: labels, value: v})
	}
	return out
}

// find returns the samples of name whose labels contain every want.
func find(ss []sample, name string, want ...string) []sample {
	var out []sample
next:
	for _, s := range ss {
		if s.name != name {
			continue
		}
		for _, w := range want {
			if !strings.Contains(s.labels, w) {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

func anyValue(ss []sample, v float64) bool {
	for _, s := range ss {
		if s.value == v {
			return true
		}
	}
	return false
}

// TestMultiregionFailsOverAndRecovers runs the whole timeline with short
// intervals on the in-memory zones and checks, in order: every region
// answers its own gateways; the failed gateway leaves its region's answer
// only; the failed region sends every region to the failover name; both
// heal and every region answers its own gateways again. It scrapes the
// metrics while the region is down and after the recovery. Times are
// printed, not asserted; the program's -timeout is the hang guard.
func TestMultiregionFailsOverAndRecovers(t *testing.T) {
	var out testproc.Buffer
	args := []string{"-interval", "200ms", "-pause", "100ms", "-timeout", "60s", "-metrics", "127.0.0.1:0", "-dns-port", "0", "-throttle"}
	var steps []string
	scrapes := map[string][]sample{}
	answers := map[string]map[string][]string{}
	hook := func(i int, slug string, d *deployment) {
		steps = append(steps, slug)
		scrapes[slug] = scrape(t, d.metricsURL)
		answers[slug] = map[string][]string{}
		for _, srv := range d.servers {
			require.NoError(t, srv.Sync(context.Background())) // the copy may trail by one copy interval
			answers[slug][srv.region] = dig(t, d.dnsAddrs[srv.region], d.names.app)
		}
	}
	err := runWith(context.Background(), args, &out, hook)
	s := out.String()
	require.NoError(t, err, s)
	require.Equal(t, []string{"start", "gateway-failure", "region-failure", "recovery", "throttle"}, steps, s)

	tables := stepTables(s)
	require.Len(t, tables, 5, s)
	regional := "httpbin → edge.global → edge.local  (regional)"
	failover := "httpbin → edge.global → global-edge.global  (failover)"
	eu := "10.1.1.1 10.1.1.2 10.1.2.1 10.1.2.2"
	us := "10.2.1.1 10.2.1.2 10.2.2.1 10.2.2.2"
	euLess := "10.1.1.1 10.1.1.2 10.1.2.1"
	want := []map[string]string{
		{"eu-west": regional + "  " + eu, "us-east": regional + "  " + us},
		{"eu-west": regional + "  " + euLess, "us-east": regional + "  " + us},
		{"eu-west": failover + "  " + euLess, "us-east": failover + "  " + euLess},
		{"eu-west": regional + "  " + eu, "us-east": regional + "  " + us},
	}
	for i, w := range want {
		for region, row := range w {
			assert.Contains(t, tables[i][region], row, "step %d, from %s\n%s", i, region, s)
		}
	}
	logSteps(t, s)

	// Each region's DNS server answers what the tables show.
	digFailover := []string{"CNAME edge.global.example.test.", "CNAME global-edge.global.example.test.", "A 10.1.1.1", "A 10.1.1.2", "A 10.1.2.1"}
	for _, r := range []string{"eu-west", "us-east"} {
		assert.Equal(t, digFailover, answers["region-failure"][r], "dig from %s while us-east is down", r)
	}
	assert.Equal(t, []string{"CNAME edge.global.example.test.", "CNAME edge.local.example.test.", "A 10.2.1.1", "A 10.2.1.2", "A 10.2.2.1", "A 10.2.2.2"},
		answers["recovery"]["us-east"], "dig from us-east after the recovery")

	// While us-east is down, some controller (at least the one that flipped
	// the global name) reports it failing over and unhealthy.
	down := scrapes["region-failure"]
	assert.True(t, anyValue(find(down, "gslbkit_failover_in_progress", `region="us-east"`), 1), "failover_in_progress")
	assert.True(t, anyValue(find(down, "gslbkit_region_healthy", `scope="global"`, `region="us-east"`), 0), "region_healthy")
	assert.True(t, anyValue(find(down, "gslbkit_cluster_healthy", `cluster="us-east-1"`), 0), "cluster_healthy")
	// Every controller wrote beats in both scopes, none throttled.
	after := scrapes["recovery"]
	for _, c := range []string{"eu-west-1", "eu-west-2", "us-east-1", "us-east-2"} {
		for _, scope := range []string{"local", "global"} {
			ok := find(after, "gslbkit_heartbeat_writes_total", `controller="`+c+`"`, `scope="`+scope+`"`, `result="ok"`)
			require.Len(t, ok, 1, "%s %s", c, scope)
			assert.Positive(t, ok[0].value, "%s %s beats written", c, scope)
			rec := find(after, "gslbkit_heartbeat_recovering_from_rate_limiting", `controller="`+c+`"`, `scope="`+scope+`"`)
			require.Len(t, rec, 1, "%s %s", c, scope)
			assert.Zero(t, rec[0].value)
		}
	}
	assert.True(t, anyValue(find(after, "gslbkit_region_healthy", `scope="global"`, `region="us-east"`), 1), "region_healthy after recovery")
	// The throttled controller counted its throttled writes and has
	// recovered by the end of its step.
	thr := scrapes["throttle"]
	for _, scope := range []string{"local", "global"} {
		w := find(thr, "gslbkit_heartbeat_writes_total", `controller="eu-west-1"`, `scope="`+scope+`"`, `result="throttled"`)
		require.Len(t, w, 1, scope)
		assert.Positive(t, w[0].value, "%s throttled writes", scope)
		rec := find(thr, "gslbkit_heartbeat_recovering_from_rate_limiting", `controller="eu-west-1"`, `scope="`+scope+`"`)
		require.Len(t, rec, 1, scope)
		assert.Zero(t, rec[0].value, scope)
	}
	// The script lifts the throttle once either scope self-heals.
	assert.Regexp(t, `eu-west-1 +(local|global) heartbeat recovering from rate limiting`, s)
}

// stepTables returns, for each step table printed, its rows by region.
func stepTables(s string) []map[string]string {
	var out []map[string]string
	var cur map[string]string
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "┌─ step"):
			cur = map[string]string{}
		case strings.HasPrefix(t, "│") && cur != nil:
			f := strings.Fields(strings.TrimPrefix(t, "│"))
			if len(f) > 0 {
				cur[f[0]] = t
			}
		case strings.HasPrefix(t, "└─") && cur != nil:
			out = append(out, cur)
			cur = nil
		}
	}
	return out
}

func TestMultiregionRejectsBadFlags(t *testing.T) {
	cases := map[string][]string{
		"regions":  {"-regions", "1"},
		"clusters": {"-clusters", "0"},
		"gateways": {"-gateways", "9"},
		"interval": {"-interval", "10ms"},
		"healthy":  {"-interval", "1s", "-healthy", "1s"},
		"ttl":      {"-ttl", "1500ms"},
		"zone":     {"-zone", "test"},
		"provider": {"-provider", "route53"},
		"timeout":  {"-timeout", "0s"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var out testproc.Buffer
			err := run(context.Background(), args, &out)
			require.ErrorIs(t, err, errFlags)
			assert.Contains(t, err.Error(), "multiregion: invalid flags: -"+name+" = ")
			assert.Contains(t, err.Error(), ": allowed ")
		})
	}
	t.Run("message", func(t *testing.T) {
		err := run(context.Background(), []string{"-regions", "1"}, new(testproc.Buffer))
		assert.EqualError(t, err, fmt.Sprintf("multiregion: invalid flags: -regions = 1: allowed [2, %d] (the timeline fails a whole region)", maxRegions))
	})
	t.Run("rfc2136 without a server", func(t *testing.T) {
		t.Setenv("GSLB_RFC2136_SERVER", "")
		var out testproc.Buffer
		err := run(context.Background(), []string{"-provider", "rfc2136"}, &out)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "-server")
	})
	t.Run("one gateway per region", func(t *testing.T) {
		var out testproc.Buffer
		err := run(context.Background(), []string{"-clusters", "1", "-gateways", "1"}, &out)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "at least 2 gateways")
	})
}

// logSteps logs the step results, or the whole output with -v.
func logSteps(t *testing.T, s string) {
	t.Helper()
	if testing.Verbose() {
		t.Log("\n" + s)
		return
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "STEP") {
			t.Log(l)
		}
	}
}

// dig asks addr for name's A records over UDP and returns the answer
// section as "TYPE data" lines, addresses sorted.
func dig(t *testing.T, addr, name string) []string {
	t.Helper()
	c := &dns.Client{Net: "udp", Timeout: 5 * time.Second}
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	r, _, err := c.Exchange(m, addr)
	require.NoError(t, err)
	require.Equal(t, dns.RcodeSuccess, r.Rcode)
	var cn, as []string
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.CNAME:
			cn = append(cn, "CNAME "+rr.Target)
		case *dns.A:
			as = append(as, "A "+rr.A.String())
		}
	}
	slices.Sort(as)
	return append(cn, as...)
}
