package failover_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/stretchr/testify/require"
)

// TestZeroValues: zero values of the exported types with methods return an
// error or work, never panic.
func TestZeroValues(t *testing.T) {
	now := time.Now()
	require.NotPanics(t, func() {
		var tp failover.Topology
		_, _ = tp.Decide(now, failover.Snapshot{})
		_, _ = tp.Desired(failover.Snapshot{})
		_ = tp.Config()
		_, _, _, _ = tp.RegionalName(), tp.GlobalName(), tp.FailoverName(), tp.GlobalZone()
	}, "Topology")
	require.NotPanics(t, func() {
		var rp failover.RecordPolicy
		_, _ = rp.Decide(now, failover.Record{})
		_, _ = rp.PoolName(failover.Record{})
		_, _ = rp.Provider(failover.Record{})
		_, _ = rp.Embedded(failover.Record{})
	}, "RecordPolicy")
	require.NotPanics(t, func() {
		var l failover.Locator
		_, _ = l.Locate(netip.MustParsePrefix("192.0.2.1/32"))
		_ = l.Preferences("eu")
	}, "Locator")
}
