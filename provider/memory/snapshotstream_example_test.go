package memory_test

import (
	"context"
	"fmt"
	"os"

	"github.com/gslbkit/gslb/provider/memory"
)

// A copy is built record by record, as a decoder reads a streamed
// snapshot, and published at once; a SnapshotView writes it back as the
// zones are walked.
func ExampleSnapshotBuilder() {
	ctx := context.Background()
	b := memory.NewSnapshotBuilder(ctx)
	_ = b.Zone("example.test.", memory.SOA{NS: "ns1.example.test.", Mbox: "hostmaster.example.test.", Serial: 7, TTL: 3600})
	_ = b.Add(memory.ZoneRecord{Name: "www", Type: "A", TTL: 60, Data: "192.0.2.1"})
	_ = b.Add(memory.ZoneRecord{Name: "www", Type: "A", TTL: 60, Data: "192.0.2.2"})
	p := new(memory.Provider)
	if err := p.RestoreBuilt(b); err != nil {
		fmt.Println(err)
		return
	}
	recs, _ := p.GetRecords(ctx, "example.test.")
	fmt.Println(len(recs), "records")
	view := p.SnapshotView()
	view.Epoch = "" // the Provider's own is random
	_ = view.WriteJSON(os.Stdout, nil)
	fmt.Println()
	// Output:
	// 2 records
	// {"format":2,"version":1,"zones":[{"name":"example.test.","soa":{"ns":"ns1.example.test.","mbox":"hostmaster.example.test.","serial":7,"refresh":0,"retry":0,"expire":0,"minimum":0,"ttl":3600},"records":[{"name":"www","type":"A","ttl":60,"data":"192.0.2.1"},{"name":"www","type":"A","ttl":60,"data":"192.0.2.2"}]}]}
}
