package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gslbkit/gslb/record"
)

// Fencing: two leaders of one cluster write the same embedded zone, each
// with its term's token. The first writes with token 1; the second takes
// over with token 2 and writes; the first, paused until then, wakes up
// and writes late: its write is refused, and the second's record stays.
func Example_fencing() {
	ctx := context.Background()
	n := newNames("example.test")
	zones, _ := newMemoryZones(n)
	v, _ := zones.view("eu-west")
	leader := func(token uint64) *record.Reconciler {
		c := record.LocalConfig(ownerID)
		c.FenceName = "_gslb-fence-eu-1"
		r, _ := record.New(&fencedStore{next: v}, c, record.Options{FenceToken: token})
		return r
	}
	edge := func(ip string) record.Desired {
		return record.Desired{Sets: []record.RRSet{{Zone: n.local, Name: "edge", Type: "A", TTL: 30 * time.Second, Values: []string{ip}}}}
	}
	old, next := leader(1), leader(2)
	_, err := old.Apply(ctx, edge("10.1.1.1"))
	fmt.Println("leader 1:", err)
	_, err = next.Apply(ctx, edge("10.1.1.2"))
	fmt.Println("leader 2:", err)
	_, err = old.Apply(ctx, edge("10.1.1.9"))
	fmt.Println("leader 1, late:", errors.Is(err, record.ErrFenced))
	recs, _ := v.GetRecords(ctx, n.local)
	fmt.Println("published:", addrsAt(recs, n.local, "edge.local.example.test."))
	// Output:
	// leader 1: <nil>
	// leader 2: <nil>
	// leader 1, late: true
	// published: [10.1.1.2]
}
