package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/internal/testproc"
)

// TestMultiregionRFC2136 runs the timeline with every controller writing one
// real BIND through RFC 2136 (each region's view of the local zone kept in
// a subtree of the BIND zone) and checks the steps converge in order with
// the same answers as in memory. It runs on real sockets, outside any
// bubble; the program's -timeout is the hang guard. Skipped without named
// unless GSLBKIT_REQUIRE_BIND=1.
func TestMultiregionRFC2136(t *testing.T) {
	if testing.Short() {
		t.Skip("starts BIND")
	}
	bind := testbind.Start(t, "example.test.")
	var out testproc.Buffer
	args := []string{"-provider", "rfc2136", "-server", bind.Addr, "-key-name", bind.KeyName,
		"-key-alg", bind.KeyAlg, "-secret", bind.Secret, "-zone", "example.test",
		"-interval", "300ms", "-pause", "100ms", "-timeout", "60s"}
	var steps []string
	err := runWith(context.Background(), args, &out, func(i int, slug string, _ *deployment) { steps = append(steps, slug) })
	s := out.String()
	require.NoError(t, err, "%s\nnamed:\n%s", s, bind.Log())
	require.Equal(t, []string{"start", "gateway-failure", "region-failure", "recovery"}, steps, s)
	tables := stepTables(s)
	require.Len(t, tables, 4, s)
	assert.Contains(t, tables[2]["us-east"], "global-edge.global  (failover)  10.1.1.1 10.1.1.2 10.1.2.1", s)
	assert.Contains(t, tables[3]["us-east"], "edge.local  (regional)  10.2.1.1 10.2.1.2 10.2.2.1 10.2.2.2", s)
	assert.Contains(t, s, "us-east.local.example.test.", "the header says where the region's view lives")
	logSteps(t, s)
}
