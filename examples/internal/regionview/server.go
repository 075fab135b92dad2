package regionview

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

// Server answers DNS (UDP and TCP) the way a client in one region sees the
// zones: a copy of the global zone with the region's view of the local
// zone grafted in (one zone, so the embedded server follows the whole
// CNAME chain, from an app name in the global zone to the addresses, in
// one answer). Run copies the view into it every refresh; the copy is only
// for looking, nothing writes it but Sync.
type Server struct {
	view          libdns.RecordGetter
	global, local string
	copy          *memory.Provider
	srv           *dnsserver.Server

	mu   sync.Mutex // serialises Sync
	last string     // what was copied last, canonically
}

// NewServer binds a server on addr ("127.0.0.1:0": a free port) for view,
// which holds the zone global and the zone local below it (both fully
// qualified).
func NewServer(view libdns.RecordGetter, global, local, addr string) (*Server, error) {
	p := new(memory.Provider)
	if err := p.AddZone(global); err != nil {
		return nil, err
	}
	cfg := dnsserver.DefaultServerConfig()
	cfg.Addr = addr
	srv, err := dnsserver.NewServer(p, cfg, nil)
	if err != nil {
		return nil, err
	}
	if err := srv.Listen(); err != nil {
		return nil, err
	}
	return &Server{view: view, global: global, local: local, copy: p, srv: srv}, nil
}

// Addr is where the server listens, "127.0.0.1:port".
func (s *Server) Addr() string { return s.srv.Addr() }

// Run serves and keeps the copy current until ctx ends.
func (s *Server) Run(ctx context.Context, every time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.Run(ctx) }()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		_ = s.Sync(ctx) // a failed read keeps the last copy; the next tick tries again
		select {
		case <-ctx.Done():
			return <-done
		case err := <-done:
			return err
		case <-t.C:
		}
	}
}

// Sync copies the region's view into the served zone when it changed.
// Safe for concurrent use (calls are serialised).
func (s *Server) Sync(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	global, err := s.view.GetRecords(ctx, s.global)
	if err != nil {
		return err
	}
	local, err := s.view.GetRecords(ctx, s.local)
	if err != nil {
		return err
	}
	sub, _ := dnsname.Relative(s.local, s.global) // "local"
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
	cur, err := s.copy.GetRecords(ctx, s.global)
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
		if _, err := s.copy.SetRecords(ctx, s.global, want); err != nil {
			return err
		}
	}
	if len(gone) > 0 {
		if _, err := s.copy.DeleteRecords(ctx, s.global, gone); err != nil {
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
