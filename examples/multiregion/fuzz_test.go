package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/provider"
)

// fakeStore returns fixed records for every zone; writes are ignored.
type fakeStore struct{ recs []libdns.Record }

func (f fakeStore) GetRecords(context.Context, string) ([]libdns.Record, error) { return f.recs, nil }
func (f fakeStore) SetRecords(_ context.Context, _ string, r []libdns.Record) ([]libdns.Record, error) {
	return r, nil
}
func (f fakeStore) DeleteRecords(_ context.Context, _ string, r []libdns.Record) ([]libdns.Record, error) {
	return r, nil
}

// FuzzView feeds a region's view whatever a DNS server might return (the
// RFC 2136 mode reads BIND's zone transfer): the subtree filter must keep
// only names inside the region's subtree, renamed relative to the view's
// zone, and resolving must end (no loop) without panicking, whatever the
// CNAME chains. A watchdog turns a hang into a failure naming the input.
func FuzzView(f *testing.F) {
	f.Add("edge.eu-west.local", "A", "10.1.1.1", "httpbin", "CNAME", "edge.local.example.test.")
	f.Add("eu-west.local", "TXT", "v=gslb1", "edge.global", "CNAME", "httpbin.example.test.")
	f.Add("x.us-east.local", "CNAME", "x.local.example.test.", "@", "NS", "ns1")
	f.Add("", "", "", "httpbin", "A", "not-an-ip")
	f.Fuzz(func(t *testing.T, n1, t1, d1, n2, t2, d2 string) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				panic(fmt.Sprintf("HANG %q %q %q %q %q %q", n1, t1, d1, n2, t2, d2))
			}
		}()
		recs := []libdns.Record{
			libdns.RR{Name: n1, Type: t1, Data: d1, TTL: time.Minute},
			libdns.RR{Name: n2, Type: t2, Data: d2, TTL: time.Minute},
		}
		n := newNames("example.test")
		st := fakeStore{recs: recs}
		v, err := newView("eu-west", map[string]provider.Mount{
			n.global: {Store: st},
			n.local:  {Store: st, Zone: n.global, Below: "eu-west.local"},
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.GetRecords(context.Background(), n.local)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			name := r.RR().Name
			if name == "" || strings.HasSuffix(name, ".eu-west.local") && name != "@" {
				t.Fatalf("record name %q not renamed into the view", name)
			}
		}
		res := v.resolve(context.Background(), n.app)
		if len(res.chain) > 8 {
			t.Fatalf("chain of %d hops", len(res.chain))
		}
		for _, c := range res.chain {
			if c != dnsname.Fqdn(c) {
				t.Fatalf("chain name %q not fully qualified", c)
			}
		}
	})
}
