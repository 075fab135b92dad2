package failover_test

import (
	"testing"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/probe"
)

// TestHealthMatchesProbeState: failover.Health(s) is the same state for
// every probe.State, by value and by name, so callers convert instead of
// mapping (the package documents it).
func TestHealthMatchesProbeState(t *testing.T) {
	for s, h := range map[probe.State]failover.Health{
		probe.Unknown:  failover.HealthUnknown,
		probe.Passing:  failover.Passing,
		probe.Warning:  failover.Warning,
		probe.Critical: failover.Critical,
		probe.Recovery: failover.Recovery,
	} {
		if failover.Health(s) != h || h.String() != s.String() {
			t.Errorf("probe.%v converts to %v, want %v", s, failover.Health(s), h)
		}
	}
}
