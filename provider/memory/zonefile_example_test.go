package memory_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/gslbkit/gslb/provider/memory"
)

// ExampleSnapshotBuilder_ReadZoneFile loads a zone file into a Provider.
func ExampleSnapshotBuilder_ReadZoneFile() {
	const file = `$ORIGIN example.com.
$TTL 300
@     IN SOA ns1 hostmaster 2026120401 3600 600 86400 300
@     IN NS  ns1
ns1   IN A   192.0.2.53
www   IN A   192.0.2.10
      IN A   192.0.2.11
@     IN DNSKEY 257 3 13 AAAA
`
	b := memory.NewSnapshotBuilder(context.Background())
	info, err := b.ReadZoneFile(strings.NewReader(file), "example.com.", memory.ZoneFileConfig{Filename: "db.example.com", SkipUnsupported: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := new(memory.Provider)
	if err := p.RestoreBuilt(b); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Zone, info.SOA.Serial, info.Records, "records, skipped", info.Skipped)

	_, err = memory.NewSnapshotBuilder(context.Background()).ReadZoneFile(strings.NewReader(file), "example.com.", memory.ZoneFileConfig{Filename: "db.example.com"})
	fmt.Println(err)
	// Output:
	// example.com. 2026120401 5 records, skipped map[DNSKEY:1]
	// db.example.com:8: memory: zone example.com.: example.com. DNSKEY: memory: unsupported record type: "DNSKEY" (supported: NS, CNAME, A, AAAA, TXT, MX, SRV, CAA, HTTPS, SVCB, PTR, DS)
}
