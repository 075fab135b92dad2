package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record"
)

const (
	zoneName = "example.test."
	appName  = "app.example.test."
	victim   = 1 // index of the backend the script stops (backend-2)
)

// demo holds the running pieces and the shared state the observer updates.
type demo struct {
	opts     options
	out      *printer
	backends []*backend
	zone     *memory.Provider
	policy   *failover.RecordPolicy
	rec      *record.Reconciler

	mu     sync.Mutex
	health map[string]failover.Health // by backend name
}

// run is the whole program; main wires it to os.Args and signals.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	opts, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	d := &demo{opts: opts, out: newPrinter(stdout), health: map[string]failover.Health{}}
	return d.run(ctx)
}

func (d *demo) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d.opts.duration > 0 {
		var c context.CancelFunc
		ctx, c = context.WithTimeout(ctx, d.opts.duration)
		defer c()
	}

	// 1. Three backends on loopback.
	for i := 1; i <= 3; i++ {
		b := newBackend(fmt.Sprintf("backend-%d", i), netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}))
		if err := b.Start(); err != nil {
			return err
		}
		defer b.Shutdown(context.Background())
		d.backends = append(d.backends, b)
	}

	// 2. The in-memory zone, answering DNS on 127.0.0.1.
	zone, err := memory.New(memory.DefaultConfig())
	if err != nil {
		return err
	}
	if err := zone.AddZone(zoneName); err != nil {
		return err
	}
	d.zone = zone
	scfg := dnsserver.DefaultServerConfig()
	scfg.Addr = fmt.Sprintf("127.0.0.1:%d", d.opts.port)
	srv, err := dnsserver.NewServer(zone, scfg, nil)
	if err != nil {
		return err
	}
	if err := srv.Listen(); err != nil {
		return fmt.Errorf("DNS server on %s: %w (choose another with -port)", scfg.Addr, err)
	}

	// 3. The health policy: probe every interval; warning after one
	// failure (still served), critical after two; a critical backend needs
	// two passes to come back. New backends start critical and one pass
	// proves them (nothing is served before it is checked).
	pol := probe.DefaultPolicy()
	pol.Interval = d.opts.interval
	pol.Timeout = d.opts.timeout
	pol.WarningThreshold = 1
	pol.CriticalThreshold = 2
	pol.PassingThreshold = 2
	pol.MaxBackoff = 4 * d.opts.interval
	pol.InitialState = probe.Critical
	pol.FirstPassImmediate = true
	if err := pol.Validate(); err != nil {
		return err
	}
	detect := probe.WorstCaseDetection(pol)

	// 4. The record policy and the reconciler that publishes its output.
	d.policy, err = failover.NewRecordPolicy(failover.DefaultRecordConfig())
	if err != nil {
		return err
	}
	rcfg := record.LocalConfig("quickstart")
	rcfg.AllowTypeSwitch = true // the embedded zone swaps whole snapshots
	d.rec, err = record.New(zone, rcfg, record.Options{})
	if err != nil {
		return err
	}

	// 5. The monitor; its observer turns every transition into a new
	// desired state for the reconciler.
	mon, err := probe.NewMonitor(probe.DefaultMonitorConfig(), probe.ObserverFunc(d.observe), slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	for _, b := range d.backends {
		d.health[b.Name] = failover.Health(pol.InitialState)
		p, err := probe.NewHTTP(b.Addr, probe.HTTPConfig{Path: "/healthz", MatchWindow: 1024})
		if err != nil {
			return err
		}
		if err := mon.Add(probe.Target{ID: b.Name, Prober: p, Policy: pol}); err != nil {
			return err
		}
	}

	d.out.header(d, srv.Addr(), pol, detect)

	var wg sync.WaitGroup
	errs := make(chan error, 3)
	goRun := func(f func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx); err != nil && ctx.Err() == nil {
				errs <- err
				cancel()
			}
		}()
	}
	goRun(srv.Run)
	goRun(d.rec.Run)
	goRun(mon.Run)
	answers := make(chan []netip.Addr, 16)
	goRun(func(ctx context.Context) error { return d.watch(ctx, srv.Addr(), answers) })

	err = d.script(ctx, answers, detect)
	cancel()
	wg.Wait()
	select {
	case e := <-errs:
		return e
	default:
	}
	return err
}

// observe receives the monitor's transitions, in order, from one goroutine.
func (d *demo) observe(e probe.Event) {
	d.mu.Lock()
	d.health[e.Target] = failover.Health(e.Transition.To)
	desired, err := d.desired()
	d.mu.Unlock()
	detail := e.Transition.Result.Detail
	if detail == "" {
		detail = e.Transition.Result.Status.String()
	}
	d.out.event(e.Target, fmt.Sprintf("%s → %s", e.Transition.From, e.Transition.To), detail)
	if err != nil {
		d.out.line("policy error: %v", err)
		return
	}
	if err := d.rec.Set(desired); err != nil {
		d.out.line("reconciler: %v", err)
	}
}

// desired computes the zone's desired state from the backends' health; d.mu
// is held.
func (d *demo) desired() (record.Desired, error) {
	r := failover.Record{Name: appName, Zone: zoneName, TTL: d.opts.ttl}
	for _, b := range d.backends {
		r.Endpoints = append(r.Endpoints, failover.Endpoint{IP: b.Public, Health: d.health[b.Name]})
	}
	fd, err := d.policy.Embedded(r)
	if err != nil {
		return record.Desired{}, err
	}
	// The reconciler reads the policy's output as it is (record.Source).
	return record.FromSource(fd), nil
}

// watch asks the DNS server for the app's A records every 50 ms, as a
// client would, and sends each new answer on ch.
func (d *demo) watch(ctx context.Context, addr string, ch chan<- []netip.Addr) error {
	c := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond}
	var last string
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		m := new(dns.Msg)
		m.SetQuestion(appName, dns.TypeA)
		if r, _, err := c.ExchangeContext(ctx, m, addr); err == nil {
			var got []netip.Addr
			for _, rr := range r.Answer {
				if a, ok := rr.(*dns.A); ok {
					if ip, ok := netip.AddrFromSlice(a.A.To4()); ok {
						got = append(got, ip)
					}
				}
			}
			if key := fmt.Sprint(got, dns.RcodeToString[r.Rcode]); key != last {
				last = key
				if len(got) == 0 {
					d.out.event("answer", dns.RcodeToString[r.Rcode], "no address yet")
				} else {
					d.out.event("answer", joinAddrs(got), "")
				}
				select {
				case ch <- got:
				case <-ctx.Done():
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func joinAddrs(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, " ")
}

func contains(as []netip.Addr, a netip.Addr) bool {
	for _, x := range as {
		if x == a {
			return true
		}
	}
	return false
}
