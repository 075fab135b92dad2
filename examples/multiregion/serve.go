package main

import (
	"fmt"

	"github.com/gslbkit/gslb/examples/internal/regionview"
)

// regionServer answers DNS on 127.0.0.1 the way a client in one region sees
// it (regionview.Server: a copy of the global zone with the region's own
// view of the local zone grafted in, so the embedded server follows the
// whole CNAME chain from httpbin.<zone> to the addresses in one answer). A
// loop copies the view into it every half interval.
type regionServer struct {
	region string
	*regionview.Server
}

// newRegionServers binds one server per region: on free ports when base is
// 0, else on base, base+1, ...
func newRegionServers(d *deployment, base int) ([]*regionServer, error) {
	var out []*regionServer
	for i, r := range d.regions {
		addr := "127.0.0.1:0"
		if base > 0 {
			addr = fmt.Sprintf("127.0.0.1:%d", base+i)
		}
		s, err := regionview.NewServer(d.views[r.name], d.names.global, d.names.local, addr)
		if err != nil {
			return nil, fmt.Errorf("-dns-port: region %s on %s: %w", r.name, addr, err)
		}
		out = append(out, &regionServer{region: r.name, Server: s})
	}
	return out, nil
}
