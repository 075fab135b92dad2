package replacetest_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record/replacetest"
)

// atomic gives the in-memory store a ReplaceRecords: its ReplaceFenced
// deletes and sets in one change of the zone, here under a lock record
// of the kit's own that only this writer moves.
type atomic struct {
	*memory.Provider
	mu sync.Mutex
	n  int
}

func (a *atomic) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	was := libdns.TXT{Name: "replacetest-lock"}
	if a.n > 0 {
		was.Text = strconv.Itoa(a.n)
	}
	now := libdns.TXT{Name: was.Name, TTL: 60, Text: strconv.Itoa(a.n + 1)}
	if err := a.ReplaceFenced(ctx, zone, was, now, del, set); err != nil {
		return err
	}
	a.n++
	return nil
}

// twoWrites deletes, then sets: a reader between the two finds the name
// switching type with neither. Its GetRecords tells it when a read has
// passed, so the window, which a network round trip would hold open, is
// seen every time.
type twoWrites struct {
	*memory.Provider
	mu   sync.Mutex
	read chan struct{} // not nil: the window is open, closed by a read started in it
}

// The lock makes the delete and the opening of the window one step for a
// reader: a read that sees the delete also closes the window, so the write
// never waits for a read that has already happened.
func (w *twoWrites) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	recs, err := w.Provider.GetRecords(ctx, zone)
	if w.read != nil { // a read in the window
		close(w.read)
		w.read = nil
	}
	return recs, err
}

func (w *twoWrites) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	read := make(chan struct{})
	w.mu.Lock()
	_, err := w.DeleteRecords(ctx, zone, del)
	if err == nil {
		w.read = read
	}
	w.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-read:
	case <-ctx.Done():
		return ctx.Err()
	}
	_, err = w.SetRecords(ctx, zone, set)
	return err
}

func open(wrap func(*memory.Provider) replacetest.Store) replacetest.Opener {
	return func(context.Context) (replacetest.Store, error) {
		p := &memory.Provider{}
		return wrap(p), p.AddZone("example.test.")
	}
}

// The in-memory store, replacing in one change, passes; a store that
// deletes and then sets is caught by the reader between its writes.
func Example() {
	ctx := context.Background()
	fmt.Println("atomic:", replacetest.Check(ctx, "example.test.", open(func(p *memory.Provider) replacetest.Store { return &atomic{Provider: p} })))
	fmt.Println("two writes:", replacetest.Check(ctx, "example.test.", open(func(p *memory.Provider) replacetest.Store { return &twoWrites{Provider: p} })))
	// Output:
	// atomic: <nil>
	// two writes: replacetest: SwitchAndBack: ReplaceRecords from addresses to a CNAME: a read while it ran found replacetest-app with A [] and CNAME []: not one atomic write
}
