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

// regionServer answers DNS (UDP and TCP) the way a client in one region
// sees the zones: a copy of the global zone with the region's view of the
// local zone grafted in, so the embedded server follows the whole CNAME
// chain, from an app name to the A and AAAA records, in one answer. A loop
// copies the view into it every refresh; nothing else writes the copy.
type regionServer struct {
	view  *view
	names names
	copy  *memory.Provider
	srv   *dnsserver.Server

	mu   sync.Mutex
	last string
}

func newRegionServer(v *view, n names, addr string) (*regionServer, error) {
	p := new(memory.Provider)
	if err := p.AddZone(n.global); err != nil {
		return nil, err
	}
	cfg := dnsserver.DefaultServerConfig()
	cfg.Addr = addr
	srv, err := dnsserver.NewServer(p, cfg, nil)
	if err != nil {
		return nil, err
	}
	if err := srv.Listen(); err != nil {
		return nil, fmt.Errorf("-dns-addr %s: %w", addr, err)
	}
	return &regionServer{view: v, names: n, copy: p, srv: srv}, nil
}

// addr is where the server listens.
func (s *regionServer) addr() string { return s.srv.Addr() }

// run serves and keeps the copy current until ctx ends.
func (s *regionServer) run(ctx context.Context, every time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.Run(ctx) }()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		_ = s.sync(ctx)
		select {
		case <-ctx.Done():
			return <-done
		case err := <-done:
			return err
		case <-t.C:
		}
	}
}

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
	sub, _ := dnsname.Relative(s.names.local, s.names.global)
	keep := func(rr libdns.RR) bool { return rr.Type != "SOA" && !(rr.Name == "@" && rr.Type == "NS") }
	var want []libdns.Record
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

func canonical(recs []libdns.Record) string {
	lines := make([]string, len(recs))
	for i, r := range recs {
		rr := r.RR()
		lines[i] = fmt.Sprintf("%s %s %d %s", strings.ToLower(rr.Name), rr.Type, rr.TTL/time.Second, rr.Data)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
