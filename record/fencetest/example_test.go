package fencetest_test

import (
	"context"
	"fmt"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record"
	"github.com/gslbkit/gslb/record/fencetest"
)

// careless "fences" by reading the fence and expecting whatever it holds:
// every write lands, a deposed writer's included.
type careless struct{ *memory.Provider }

func (c careless) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	recs, err := c.GetRecords(ctx, zone)
	if err != nil {
		return err
	}
	was.Text = ""
	for _, r := range recs {
		if t, ok := r.(libdns.TXT); ok && t.Name == record.DefaultFenceName {
			was = t
		}
	}
	return c.Provider.ReplaceFenced(ctx, zone, was, now, del, set)
}

// The in-memory store passes; a store that reads its fence instead of
// checking it in the write is caught by the first late writer.
func Example() {
	zone := "example.test."
	open := func(wrap func(*memory.Provider) fencetest.Store) fencetest.Opener {
		return func(context.Context) (fencetest.Store, error) {
			p := &memory.Provider{}
			return wrap(p), p.AddZone(zone)
		}
	}
	ctx := context.Background()
	fmt.Println("memory:", fencetest.Check(ctx, zone, open(func(p *memory.Provider) fencetest.Store { return p })))
	fmt.Println("careless:", fencetest.Check(ctx, zone, open(func(p *memory.Provider) fencetest.Store { return careless{p} })))
	// Output:
	// memory: <nil>
	// careless: fencetest: LateWriterRefused: a late writer expecting the old fence: got <nil>, want a refusal answering Fenced() true
}
