package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/gslbkit/gslb/probe"
)

// script is the demo's timeline: wait for all backends, stop one, measure
// how long until the DNS answer drops it, restart it, measure its return.
func (d *demo) script(ctx context.Context, answers <-chan []netip.Addr, detect time.Duration) error {
	v := d.backends[victim]
	var all []netip.Addr
	for _, b := range d.backends {
		all = append(all, b.Public)
	}
	until := func(cond func([]netip.Addr) bool) error {
		for {
			select {
			case <-ctx.Done():
				return d.ended(ctx)
			case got := <-answers:
				if cond(got) {
					return nil
				}
			}
		}
	}
	sleep := func(dur time.Duration) error {
		t := time.NewTimer(dur)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return d.ended(ctx)
		case <-t.C:
			return nil
		}
	}

	if err := until(func(got []netip.Addr) bool {
		for _, a := range all {
			if !contains(got, a) {
				return false
			}
		}
		return true
	}); err != nil {
		return err
	}
	d.out.note("all three backends are in the answer")
	if err := sleep(d.opts.killAfter); err != nil {
		return err
	}

	v.Stop()
	stopped := time.Now()
	d.out.note(fmt.Sprintf("stopping %s (%s) — it no longer accepts connections", v.Name, v.Public))
	if err := until(func(got []netip.Addr) bool { return len(got) > 0 && !contains(got, v.Public) }); err != nil {
		return err
	}
	took := time.Since(stopped)
	verdict := "within the bound"
	if took > detect {
		verdict = "OVER the bound (a busy machine delays timers)"
	}
	d.out.note(fmt.Sprintf("failover: %s left the answer %s after it stopped; bound %s + 0s publish delay — %s",
		v.Name, took.Round(time.Millisecond), detect, verdict))
	d.out.result("failover", took, detect)

	if rest := d.opts.downFor - time.Since(stopped); rest > 0 {
		if err := sleep(rest); err != nil {
			return err
		}
	}
	if err := v.Start(); err != nil {
		return err
	}
	started := time.Now()
	d.out.note(fmt.Sprintf("restarting %s on %s", v.Name, v.Addr))
	if err := until(func(got []netip.Addr) bool { return contains(got, v.Public) }); err != nil {
		return err
	}
	back := time.Since(started)
	d.out.note(fmt.Sprintf("recovery: %s is back in the answer %s after it restarted (critical back-off, then %d passes)",
		v.Name, back.Round(time.Millisecond), 2))
	d.out.result("recovery", back, 0)

	if d.opts.duration == 0 {
		d.out.note("the script is done; still serving — press Ctrl-C to stop")
		<-ctx.Done()
		return nil
	}
	d.out.note("done")
	return nil
}

// ended explains why the script stopped early.
func (d *demo) ended(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the script did not finish within -duration %s", d.opts.duration)
	}
	return nil // interrupted
}

// printer writes the live view: a header, then a timeline with times
// relative to the start. It is safe for concurrent use.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func newPrinter(w io.Writer) *printer { return &printer{w: w, start: time.Now()} }

func (p *printer) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *printer) stamp() string {
	return fmt.Sprintf("%+7.2fs", time.Since(p.start).Seconds())
}

func (p *printer) event(who, what, detail string) {
	if detail != "" {
		detail = "  (" + detail + ")"
	}
	p.line("  %s  %-10s %s%s", p.stamp(), who, what, detail)
}

func (p *printer) note(s string) { p.line("  %s  ▶ %s", p.stamp(), s) }

// result prints a machine-readable line the tests look for.
func (p *printer) result(what string, took, bound time.Duration) {
	if bound > 0 {
		p.line("RESULT %s took=%s bound=%s", what, took.Round(time.Millisecond), bound)
		return
	}
	p.line("RESULT %s took=%s", what, took.Round(time.Millisecond))
}

func (p *printer) header(d *demo, dnsAddr string, pol probe.Policy, detect time.Duration) {
	host, port := dnsAddr, ""
	if ap, err := netip.ParseAddrPort(dnsAddr); err == nil {
		host, port = ap.Addr().String(), fmt.Sprint(ap.Port())
	}
	p.line("gslbkit quickstart — health-checked DNS failover in one process")
	p.line("")
	p.line("  zone    %s answered on %s (UDP and TCP)", zoneName, dnsAddr)
	p.line("  name    %s, TTL %s", appName, d.opts.ttl)
	p.line("  probes  every %s (timeout %s); warning after %d failure, critical after %d; %d passes to return",
		pol.Interval, pol.Timeout, pol.WarningThreshold, pol.CriticalThreshold, pol.PassingThreshold)
	p.line("  bound   a dead backend leaves the answer within %s (probe.WorstCaseDetection)", detect)
	p.line("          + 0s publish delay (embedded zone) + the TTL through a caching resolver")
	p.line("")
	for _, b := range d.backends {
		p.line("  %-10s answers as %-10s probed at http://%s/healthz", b.Name, b.Public, b.Addr)
	}
	p.line("")
	p.line("  try it meanwhile:  dig @%s -p %s %s A +short", host, port, appName)
	p.line("")
}
