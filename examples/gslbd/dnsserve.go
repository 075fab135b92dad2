package main

import (
	"log/slog"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
)

// newDNSServer builds the library's authoritative server (dnsserver.Server)
// for zone: batched UDP, bounded TCP with idle eviction and accept
// back-off, and zone transfer to standard secondaries (AXFR, IXFR and
// NOTIFY on the DNS port) when cfg's transfer block allows or notifies
// anyone. gslbd adds nothing to its loops; the metrics and /readyz read
// its Stats.
func newDNSServer(cfg Config, zone *memory.Provider, log *slog.Logger) (*dnsserver.Server, error) {
	sc := dnsserver.DefaultServerConfig()
	sc.Addr = cfg.DNS.Addr
	sc.TCPIdleTimeout = cfg.DNS.TCPIdleTimeout.D()
	sc.MaxTCPConns = cfg.DNS.MaxTCPConns
	sc.MaxTCPConnsPerSource = cfg.DNS.MaxTCPConnsPerSource
	var xfr *zonetransfer.Transfer
	sc.RRL = cfg.DNS.RRL
	if cfg.Transfer.Enabled() {
		var err error
		if xfr, err = zonetransfer.NewTransfer(zone, cfg.Transfer, log); err != nil {
			return nil, err
		}
		// Secondaries get the stored records: the region-filtered views of
		// replication do not travel.
		for _, r := range cfg.Records {
			if r.Answer.perQuery() {
				log.Warn("transfer: records are answered per query; secondaries serve every published address to every client (per-query answers are for the embedded server and gslbd nodes only)", "record", r.Name, "answer", string(r.Answer))
				break
			}
		}
	regions:
		for _, r := range cfg.Records {
			for _, a := range r.Addresses {
				if len(a.Regions) > 0 {
					log.Warn("transfer: records have region tags; secondaries serve every address to every client (region-filtered views are for gslbd nodes only)", "record", r.Name)
					break regions
				}
			}
		}
	}
	srv, err := dnsserver.NewServer(zone, sc, log)
	if err != nil {
		return nil, err
	}
	if xfr != nil {
		if err := srv.SetTransfer(xfr); err != nil {
			return nil, err
		}
	}
	if err := srv.Listen(); err != nil {
		return nil, err
	}
	return srv, nil
}
