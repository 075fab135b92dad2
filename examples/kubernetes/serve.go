package main

import (
	"fmt"

	"github.com/gslbkit/gslb/examples/internal/regionview"
)

// newRegionServer binds the region's DNS server on addr: it answers (UDP
// and TCP) the way a client in the region sees the zones, a copy of the
// global zone with the region's view of the local zone grafted in, so the
// embedded server follows the whole CNAME chain, from an app name to the A
// and AAAA records, in one answer (regionview.Server). Its Run loop copies
// the view into it every refresh; nothing else writes the copy.
func newRegionServer(v *view, n names, addr string) (*regionview.Server, error) {
	s, err := regionview.NewServer(v, n.global, n.local, addr)
	if err != nil {
		return nil, fmt.Errorf("-dns-addr %s: %w", addr, err)
	}
	return s, nil
}
