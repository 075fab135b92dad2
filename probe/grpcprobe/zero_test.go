package grpcprobe_test

import (
	"testing"

	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/grpcprobe"
	"github.com/stretchr/testify/require"
)

// TestZeroProber: a zero Prober fails its probes, never panics.
func TestZeroProber(t *testing.T) {
	var p grpcprobe.Prober
	require.NotPanics(t, func() {
		r := p.Probe(t.Context())
		require.Equal(t, probe.Fail, r.Status)
		_ = p.Addr()
	})
	require.NoError(t, grpcprobe.Config{}.Validate(), "a zero Config takes its defaults")
}
