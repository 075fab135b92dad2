package rfc2136_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Against a real BIND, with a seeded Faulty injecting throttling,
// transient errors and partial batches into a third of the calls, the
// usual chain (meter, retry) still converges: after every SetRecords the
// zone holds exactly the desired RRsets. Calls are sequential, so the
// seed fixes which calls fail. Retry waits are 1 ms of real time.
func TestChainOverBINDConverges(t *testing.T) {
	s := testbind.Start(t, "example.test.")
	p := newProvider(t, s)
	f, err := providertest.NewFaulty(p, providertest.FaultConfig{Seed: 2026, ThrottleRate: 0.1, TransientRate: 0.1, PartialRate: 0.15})
	require.NoError(t, err)
	cfg := provider.ChainConfig{Retry: &provider.RetryConfig{
		MaxAttempts: 10, BaseDelay: time.Millisecond, ThrottledDelay: time.Millisecond,
		MaxDelay: time.Millisecond, Jitter: 0,
	}}
	w, meter, err := provider.NewChain(f, cfg, nil)
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(7, 7))
	ctx := context.Background()
	want := map[string][]string{}
	for step := range 25 {
		var batch []libdns.Record
		for n := range 4 {
			name := fmt.Sprintf("svc%d", n)
			var ips []string
			for k := range 1 + rng.IntN(3) {
				ip := netip.AddrFrom4([4]byte{192, 0, byte(2 + k), byte(rng.IntN(250) + 1)}).String()
				ips = append(ips, ip)
				batch = append(batch, libdns.Address{Name: name, IP: netip.MustParseAddr(ip), TTL: 30 * time.Second})
			}
			want[name] = ips
		}
		_, err := w.SetRecords(ctx, "example.test.", batch)
		require.NoError(t, err, "step %d", step)
		got, err := w.GetRecords(ctx, "example.test.")
		require.NoError(t, err, "step %d", step)
		have := map[string][]string{}
		for _, r := range got {
			if a, ok := r.(libdns.Address); ok && want[a.Name] != nil {
				have[a.Name] = append(have[a.Name], a.IP.String())
			}
		}
		for name, ips := range want {
			assert.ElementsMatch(t, dedupe(ips), have[name], "step %d: %s", step, name)
		}
	}
	st := meter.Stats()
	assert.Equal(t, int64(0), st.Total().Errors, "every logical call succeeded")
	assert.NotEmpty(t, f.Faults(), "faults were injected")
	t.Logf("%d calls reached the wrapper, %d faults injected", f.Calls(), len(f.Faults()))
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
