package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/libdns/libdns"
)

// Fencing: two replicas of one cluster write the same embedded zone. The
// first leads with token 1; the second takes over with token 2 and
// writes; the first, paused until then, wakes up and writes late with its
// token 1: the store refuses it, and the second's record stays.
func Example_fencing() {
	ctx := context.Background()
	n := newNames("example.test")
	zones, _ := newMemoryZones(n)
	v, _ := zones.view("eu-west")
	book := newFenceBook()
	old := &fencedStore{next: v, book: book, cluster: "eu-1"}
	next := &fencedStore{next: v, book: book, cluster: "eu-1"}
	write := func(s *fencedStore, ip string) error {
		_, err := s.SetRecords(ctx, n.local, []libdns.Record{
			libdns.Address{Name: "edge", TTL: 30 * time.Second, IP: netip.MustParseAddr(ip)},
		})
		return err
	}
	old.SetFencingToken(1)
	fmt.Println("leader 1:", write(old, "10.1.1.1"))
	next.SetFencingToken(2)
	fmt.Println("leader 2:", write(next, "10.1.1.2"))
	err := write(old, "10.1.1.1")
	fmt.Println("leader 1, late:", errors.Is(err, errFenced))
	recs, _ := v.GetRecords(ctx, n.local)
	fmt.Println("published:", addrsAt(recs, n.local, "edge.local.example.test."))
	// Output:
	// leader 1: <nil>
	// leader 2: <nil>
	// leader 1, late: true
	// published: [10.1.1.2]
}
