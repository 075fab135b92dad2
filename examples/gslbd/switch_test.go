package main

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/gslbkit/gslb/probe"
)

// TestFailoverSwitchLeavesNoGap: a record's switch between its addresses
// and its failover CNAME (a disable, an enable, every address failing, one
// passing again) is one change of the embedded zone. Made as two (delete
// the A RRset, then set the CNAME), the version between them had neither,
// and the name answered NODATA (its owner marker below it keeps it in the
// zone) to whoever asked then, a node that synced it, and a secondary that
// transferred it: an I2 breach the torture walk saw (seed 1877470192, the
// controller answering NODATA for r0 right after a disable).
func TestFailoverSwitchLeavesNoGap(t *testing.T) {
	c := newTestController(t, apiYAML+"    failover: backup.example.net.\n")
	h := c.handler()
	const name = "app.example.test."
	ids := make([]string, 0, 3)
	for _, a := range c.records[0].addrs {
		ids = append(ids, a.id)
	}
	for _, step := range []struct {
		what string
		do   func()
		want string // the answer's first entry after the step
	}{
		{"disable", func() { action(t, h, "/api/records/app.example.test/disable") }, "CNAME backup.example.net."},
		{"enable", func() { action(t, h, "/api/records/app.example.test/enable") }, "192.0.2.1"},
		{"every address failing", func() {
			for _, id := range ids {
				c.observe(probe.Event{Target: id, Transition: probe.Transition{From: probe.Passing, To: probe.Critical, At: time.Now()}})
			}
		}, "CNAME backup.example.net."},
		{"one address passing again", func() { pass(c, ids[1]) }, "192.0.2.2"},
	} {
		before := c.zone.Version()
		step.do()
		reconcile(t, c)
		if got := zoneAnswer(c.zone, name); len(got) == 0 || got[0] != step.want {
			t.Fatalf("%s: answer %v, want %s first", step.what, got, step.want)
		}
		changes, ok := c.zone.Changes(before)
		if !ok {
			t.Fatalf("%s: journal truncated", step.what)
		}
		// Replay the journal version by version: the name must hold its
		// addresses or its CNAME at every version a reader could see.
		var versions []uint64
		for _, ch := range changes {
			if ch.Name == "app" && !slices.Contains(versions, ch.Version) {
				versions = append(versions, ch.Version)
			}
		}
		if len(versions) != 1 {
			var seen []string
			for _, ch := range changes {
				if ch.Name == "app" {
					seen = append(seen, fmt.Sprintf("version %d: %s → %d records", ch.Version, ch.Type, len(ch.Records)))
				}
			}
			t.Errorf("%s: the switch took %d zone versions, the name answering neither type between them: %v", step.what, len(versions), seen)
		}
	}
}

// action POSTs an operator action and fails the test unless it is 200.
func action(t *testing.T, h http.Handler, path string) {
	t.Helper()
	if code, _, body := act(t, h, path, ""); code != http.StatusOK {
		t.Fatalf("%s: %d %s", path, code, body)
	}
}
