package regionview

import (
	"context"
	"fmt"
	"sync"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/provider"
)

// Reads is one controller's reads of its view during one tick: each store
// zone is read once per tick however many of the view's zones live in it
// (with RFC 2136 and Route 53 the local zone is a subtree of the global
// one) and however many readers ask (the heartbeat readers and the
// read-backs of the shared sets), so a controller costs one zone transfer
// per zone per tick against an RFC 2136 server. Call Reset at the start of
// every tick. Safe for concurrent use.
type Reads struct {
	// View is the region's view.
	View *provider.Mounts
	// Region names the region in errors.
	Region string

	mu   sync.Mutex
	recs map[storeZone][]libdns.Record
}

// storeZone names one zone of one store: what a tick's reads are cached by.
type storeZone struct {
	store libdns.RecordGetter
	zone  string
}

// Reset forgets the reads of the last tick.
func (t *Reads) Reset() {
	t.mu.Lock()
	t.recs = nil
	t.mu.Unlock()
}

// GetRecords implements libdns.RecordGetter from this tick's reads.
func (t *Reads) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	m, ok := t.View.Where(zone)
	if !ok {
		return nil, fmt.Errorf("region %s: %w: %q", t.Region, provider.ErrNotMounted, zone)
	}
	key := storeZone{store: m.Store, zone: m.Zone}
	t.mu.Lock()
	recs, ok := t.recs[key]
	t.mu.Unlock()
	if !ok {
		var err error
		if recs, err = m.Store.GetRecords(ctx, m.Zone); err != nil {
			return nil, err
		}
		t.mu.Lock()
		if t.recs == nil {
			t.recs = map[storeZone][]libdns.Record{}
		}
		t.recs[key] = recs
		t.mu.Unlock()
	}
	return m.Out(recs), nil
}
