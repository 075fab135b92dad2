package zonerecord_test

import (
	"fmt"
	"time"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/libdns/libdns"
)

func Example() {
	fqdn, typ, ttl, data, wire, err := zonerecord.Parse("example.com.", libdns.RR{Name: "WWW", Type: "cname", TTL: 90 * time.Second, Data: "Target.example.net"})
	fmt.Println(fqdn, typ, ttl, data, err)
	fmt.Println(wire)
	// Output:
	// www.example.com. CNAME 90 target.example.net. <nil>
	// www.example.com.	90	IN	CNAME	target.example.net.
}
