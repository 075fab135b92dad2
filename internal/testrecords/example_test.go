package testrecords_test

import (
	"context"
	"fmt"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider/memory"
)

// A store's records at one name and type, their data sorted.
func ExampleAt() {
	p := &memory.Provider{}
	ctx := context.Background()
	_ = p.AddZone("example.test.")
	_, err := p.SetRecords(ctx, "example.test.", []libdns.Record{
		testrecords.Address("app", "192.0.2.2"), testrecords.Address("app", "192.0.2.1"), testrecords.Fence("deploy 1 0"),
	})
	recs, _ := p.GetRecords(ctx, "example.test.")
	_, app := testrecords.At(recs, "app", "A")
	_, fence := testrecords.At(recs, "_gslb-fence", "TXT")
	fmt.Println(err, app, fence)
	// Output: <nil> [192.0.2.1 192.0.2.2] [deploy 1 0]
}
