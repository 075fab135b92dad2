package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/internal/testproc"
)

// TestMultiregionVirtualTime runs the default timeline (500 ms intervals,
// 2 s pauses, 3 regions) plus the throttle step inside a synctest bubble over the in-memory zones,
// without sockets: virtual time makes every step's timing exact, so the
// region's failover must land within the detection bound the program
// prints.
func TestMultiregionVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out testproc.Buffer
		var steps []string
		var at []time.Time
		start := time.Now()
		err := runWith(context.Background(), []string{"-regions", "3", "-dns-port", "-1", "-throttle"}, &out,
			func(i int, slug string, d *deployment) {
				steps = append(steps, slug)
				at = append(at, time.Now())
			})
		s := out.String()
		require.NoError(t, err, s)
		require.Equal(t, []string{"start", "gateway-failure", "region-failure", "recovery", "throttle"}, steps, s)
		tables := stepTables(s)
		require.Len(t, tables, 5, s)
		assert.Contains(t, tables[2]["ap-south"], "(failover)  10.1.1.1 10.1.1.2 10.1.2.1 10.2.1.1 10.2.1.2 10.2.2.1 10.2.2.2", s)
		assert.Contains(t, tables[3]["ap-south"], "(regional)  10.3.1.1 10.3.1.2 10.3.2.1 10.3.2.2", s)
		// The region failed one pause after step 1; its failover took at most
		// the printed bound: 0.5 s to notice + 3.5 s to go stale + 0.5 s to
		// read + 125 ms until the script looks.
		failedAt := at[1].Add(2 * time.Second)
		assert.LessOrEqual(t, at[2].Sub(failedAt), 4625*time.Millisecond, s)
		assert.Contains(t, s, "(bound 4.625s:", s)
		// Panic threshold (50 %): once fewer than half of ap-south's
		// gateways are healthy, its clients get the other regions' gateways
		// from the regional record at once, before any controller sees the
		// region dead, rather than the last (dead) survivors held until the
		// beats go stale.
		moved := regexp.MustCompile(`ap-south +httpbin → edge\.global → edge\.local  \(regional\) +10\.1\.1\.1 10\.1\.1\.2 10\.1\.2\.1 10\.2\.1\.1 10\.2\.1\.2 10\.2\.2\.1 10\.2\.2\.2`).FindStringIndex(s)
		dead := strings.Index(s, "sees region ap-south dead")
		require.NotNil(t, moved, "ap-south's clients move on through the regional record\n%s", s)
		assert.Less(t, moved[0], dead, "before the region is seen dead\n%s", s)
		assert.Less(t, time.Since(start), 60*time.Second, "the default run fits the minute")
		// Throttled writes self-heal before any peer sees the beat stale:
		// no answer changes anywhere.
		assert.Contains(t, s, "STEP 4 throttle", s)
		assert.Regexp(t, `STEP 4 throttle converged=\S+ answer-changes=0`, s)
		assert.Regexp(t, `eu-west-1 +(local|global) self-heal beat written, stamped 3m0s ahead`, s)
		logSteps(t, s)
	})
}
