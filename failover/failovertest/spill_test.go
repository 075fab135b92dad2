package failovertest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/failover/failovertest"
	"github.com/gslbkit/gslb/record"
)

// The scenario and the policy are in example_spill_test.go, beside
// Example_spillOver, so the documentation shows them whole.

// TestSpillOverPolicyRun runs the user's policy with the whole kit: a
// probe monitor, heartbeats and reconcilers per controller, in a bubble.
func TestSpillOverPolicyRun(t *testing.T) {
	spillScenario().Run(t)
}

// TestReplayReportsFailures checks that Replay can fail: a wrong
// expectation is reported, and steps it cannot play are refused.
func TestReplayReportsFailures(t *testing.T) {
	s := spillScenario()
	s.At(5*time.Minute).ExpectWithin(time.Second, "a", s.AppName(), s.Addrs("a1")...)
	err := s.Replay(nil)
	require.ErrorIs(t, err, failovertest.ErrExpectation)

	s = spillScenario()
	s.At(time.Minute).ControllerDown("a-1")
	require.ErrorIs(t, s.Replay(nil), failovertest.ErrInvalid)
}

// The reconciler takes the policy's output as it is.
var _ record.Source = failover.DesiredState{}
