package regionview_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/examples/internal/regionview"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counting counts a store's reads.
type counting struct {
	*memory.Provider
	reads int
}

func (c *counting) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	c.reads++
	return c.Provider.GetRecords(ctx, zone)
}

// TestReads: with the local zone a subtree of the global one in one store,
// a tick reads that store once for both zones, each renamed as mounted; a
// new tick reads again; a zone not mounted is ErrNotMounted.
func TestReads(t *testing.T) {
	ctx := context.Background()
	st := &counting{Provider: new(memory.Provider)}
	if err := st.AddZone("example.test."); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetRecords(ctx, "example.test.", []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
		libdns.Address{Name: "edge.eu.local", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.2")},
	}); err != nil {
		t.Fatal(err)
	}
	view, err := provider.NewMounts(map[string]provider.Mount{
		"example.test.":       {Store: st},
		"local.example.test.": {Store: st, Zone: "example.test.", Below: "eu.local"},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &regionview.Reads{View: view, Region: "eu"}
	for tick := 1; tick <= 2; tick++ {
		r.Reset()
		for range 2 {
			if _, err := r.GetRecords(ctx, "example.test."); err != nil {
				t.Fatal(err)
			}
			local, err := r.GetRecords(ctx, "local.example.test.")
			if err != nil {
				t.Fatal(err)
			}
			if len(local) != 1 || local[0].RR().Name != "edge" {
				t.Fatalf("local zone read as %v, want edge only", local)
			}
		}
		if st.reads != tick {
			t.Fatalf("tick %d: %d store reads, want %d", tick, st.reads, tick)
		}
	}
	if _, err := r.GetRecords(ctx, "other.test."); !errors.Is(err, provider.ErrNotMounted) {
		t.Fatalf("unmounted zone: %v", err)
	}
}
