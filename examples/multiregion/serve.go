package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
)

// regionServer answers DNS on 127.0.0.1 the way a client in one region sees
// it: a copy of the global zone with the region's own view of the local
// zone grafted in (one zone, so the embedded server follows the whole
// CNAME chain from httpbin.<zone> to the addresses in one answer). A loop
// copies the view into it every half interval; the copy is only for
// looking, nothing writes it but that loop.
type regionServer struct {
	region string
	view   *view
	names  names
	copy   *memory.Provider
	srv    *dnsserver.Server

	mu   sync.Mutex // serialises sync
	last string     // what was copied last, canonically
}

// newRegionServers binds one server per region: on free ports when base is
// 0, else on base, base+1, ...
func newRegionServers(d *deployment, base int) ([]*regionServer, error) {
	var out []*regionServer
	for i, r := range d.regions {
		p := new(memory.Provider)
		if err := p.AddZone(d.names.global); err != nil {
			return nil, err
		}
		cfg := dnsserver.DefaultServerConfig()
		cfg.Addr = "127.0.0.1:0"
		if base > 0 {
			cfg.Addr = fmt.Sprintf("127.0.0.1:%d", base+i)
		}
		srv, err := dnsserver.NewServer(p, cfg, nil)
		if err != nil {
			return nil, err
		}
		if err := srv.Listen(); err != nil {
			return nil, fmt.Errorf("-dns-port: region %s on %s: %w", r.name, cfg.Addr, err)
		}
		out = append(out, &regionServer{region: r.name, view: d.views[r.name], names: d.names, copy: p, srv: srv})
	}
	return out, nil
}

// run serves and keeps the copy current until ctx ends.
func (s *regionServer) run(ctx context.Context, every time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.Run(ctx) }()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		_ = s.sync(ctx) // a failed read keeps the last copy; the next tick tries again
		select {
		case <-ctx.Done():
			return <-done
		case err := <-done:
			return err
		case <-t.C:
		}
	}
}

// sync copies the region's view into the served zone when it changed.
// Safe for concurrent use (calls are serialised).
func (s *regionServer) sync(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	global, err := s.view.GetRecords(ctx, s.names.global)
	if err != nil {
		return err
	}
	local, err := s.view.GetRecords(ctx, s.names.local)
	if err != nil {
		return err
	}
	sub, _ := dnsname.Relative(s.names.local, s.names.global) // "local"
	var want []libdns.Record
	keep := func(rr libdns.RR) bool {
		return rr.Type != "SOA" && !(rr.Name == "@" && rr.Type == "NS")
	}
	for _, r := range global {
		rr := r.RR()
		n := strings.ToLower(rr.Name)
		if !keep(rr) || n == sub || strings.HasSuffix(n, "."+sub) {
			continue // the local subtree comes from the region's view only
		}
		want = append(want, r)
	}
	var kept []libdns.Record
	for _, r := range local {
		if keep(r.RR()) {
			kept = append(kept, r)
		}
	}
	below, err := provider.Mount{Below: sub}.Into(kept) // the local zone below "local"
	if err != nil {
		return err
	}
	want = append(want, below...)
	key := canonical(want)
	if key == s.last {
		return nil
	}
	cur, err := s.copy.GetRecords(ctx, s.names.global)
	if err != nil {
		return err
	}
	sets := map[string]bool{}
	for _, r := range want {
		rr := r.RR()
		sets[strings.ToLower(rr.Name)+" "+rr.Type] = true
	}
	var gone []libdns.Record
	for _, r := range cur {
		rr := r.RR()
		if keep(rr) && !sets[strings.ToLower(rr.Name)+" "+rr.Type] {
			gone = append(gone, r)
		}
	}
	// Set first: the embedded zone swaps a CNAME for addresses (and back)
	// in one call, so a name never answers nothing in between.
	if len(want) > 0 {
		if _, err := s.copy.SetRecords(ctx, s.names.global, want); err != nil {
			return err
		}
	}
	if len(gone) > 0 {
		if _, err := s.copy.DeleteRecords(ctx, s.names.global, gone); err != nil {
			return err
		}
	}
	s.last = key
	return nil
}

// canonical renders records as sorted lines, to tell whether they changed.
func canonical(recs []libdns.Record) string {
	lines := make([]string, len(recs))
	for i, r := range recs {
		rr := r.RR()
		lines[i] = fmt.Sprintf("%s %s %d %s", strings.ToLower(rr.Name), rr.Type, rr.TTL/time.Second, rr.Data)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
