package dnsprobe_test

import (
	"testing"

	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/dnsprobe"
	"github.com/stretchr/testify/require"
)

// TestZeroProber: a zero Prober fails its probes, never panics.
func TestZeroProber(t *testing.T) {
	var p dnsprobe.Prober
	require.NotPanics(t, func() {
		r := p.Probe(t.Context())
		require.Equal(t, probe.Fail, r.Status)
		_ = p.Addr()
	})
	require.EqualError(t, dnsprobe.Config{}.Validate(), `dnsprobe: invalid config: name = "": allowed a domain name (required)`)
	require.NoError(t, dnsprobe.Config{Name: "example.com."}.Validate(), "other zero fields take their defaults")
}
