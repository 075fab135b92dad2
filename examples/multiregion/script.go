package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// run is the whole program; main wires it to os.Args and signals.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	return runWith(ctx, args, stdout, nil)
}

// afterStepFunc is called by the script once step i has converged, before
// the next one starts; the tests look at the running system through it
// (the metrics, the DNS servers). It runs on the script's goroutine: the
// timeline waits for it.
type afterStepFunc func(i int, slug string, d *deployment)

// runWith is run with a hook after every step (nil: none).
func runWith(ctx context.Context, args []string, stdout io.Writer, afterStep afterStepFunc) error {
	opts, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	d, err := newDeployment(opts)
	if err != nil {
		return err
	}
	d.afterStep = afterStep
	out := newPrinter(stdout)
	var met *metrics
	if opts.metrics != "" {
		met = newMetrics()
	}
	var ctrls []*controller
	for _, cl := range d.clusters() {
		c, err := newController(d, cl, out, met)
		if err != nil {
			return err
		}
		ctrls = append(ctrls, c)
	}
	d.ctrls = ctrls

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(runCtx)
	metricsURL := ""
	if met != nil {
		ln, serve, err := met.listen(opts.metrics)
		if err != nil {
			return fmt.Errorf("-metrics %s: %w", opts.metrics, err)
		}
		metricsURL = "http://" + ln.Addr().String() + "/metrics"
		d.metricsURL = metricsURL
		g.Go(func() error { return serve(gctx) })
	}
	if opts.dnsPort >= 0 {
		servers, err := newRegionServers(d, opts.dnsPort)
		if err != nil {
			return err
		}
		d.dnsAddrs = map[string]string{}
		d.servers = servers
		for _, s := range servers {
			d.dnsAddrs[s.region] = s.Addr()
			g.Go(func() error { return s.Run(gctx, max(opts.interval/2, 50*time.Millisecond)) })
		}
	}
	out.header(d, metricsURL)
	for _, c := range ctrls {
		g.Go(func() error { return c.run(gctx) })
	}

	scriptErr := d.script(gctx, out)
	if scriptErr == nil && opts.stay {
		out.note("the timeline is done; still running — press Ctrl-C to stop")
		<-gctx.Done()
	}
	cancel()
	werr := g.Wait()
	if scriptErr != nil && ctx.Err() != nil {
		return nil // interrupted
	}
	// A loop stopped by the script's end or its -timeout reports only a
	// context error; the script's own error says what did not happen.
	if werr != nil && scriptErr != nil && (errors.Is(werr, context.Canceled) || errors.Is(werr, context.DeadlineExceeded)) {
		werr = nil
	}
	return errors.Join(scriptErr, werr)
}

// step is one step of the timeline: what the script does, and a short name
// for the machine-readable result line.
type step struct {
	slug, title string
	act         func()
	// until, when set, must also hold before the step is over; the loop
	// calls it on every poll, after comparing the answers.
	until func() bool
}

// script is the timeline: wait for the deployment to converge, fail one
// gateway, fail a whole region, heal both; after each step wait until every
// region resolves httpbin.<zone> the way the topology promises, and print
// the table.
func (d *deployment) script(ctx context.Context, out *printer) error {
	ctx, cancel := context.WithTimeout(ctx, d.opts.timeout)
	defer cancel()
	first := d.regions[0]
	victim := first.clusters[len(first.clusters)-1].gateways[len(first.clusters[0].gateways)-1]
	lost := d.regions[len(d.regions)-1]
	setRegion := func(r *region, up bool) {
		for _, c := range r.clusters {
			for _, g := range c.gateways {
				g.setReady(up)
			}
		}
	}
	steps := []step{
		{slug: "start", title: "every gateway healthy: each region answers its own gateways"},
		{slug: "gateway-failure", title: fmt.Sprintf("gateway %s (%s) fails: its endpoints go not ready", victim.name, victim.addr),
			act: func() { victim.setReady(false) }},
		{slug: "region-failure", title: fmt.Sprintf("region %s fails: all %d of its gateways go not ready", lost.name, len(lost.upAddrs())),
			act: func() { setRegion(lost, false) }},
		{slug: "recovery", title: fmt.Sprintf("both heal: gateway %s and region %s are ready again", victim.name, lost.name),
			act: func() { victim.setReady(true); setRegion(lost, true) }},
	}
	if d.opts.throttle {
		steps = append(steps, d.throttleStep(out))
	}
	poll := d.poll()
	last := map[string]resolution{}
	for i, s := range steps {
		if s.act != nil {
			out.note(fmt.Sprintf("step %d: %s", i, s.title))
			s.act()
		}
		began := time.Now()
		want := d.expected()
		changes := 0
		for {
			got := map[string]resolution{}
			done := true
			for _, r := range d.regions {
				res := d.views[r.name].resolve(ctx, d.names.app)
				got[r.name] = res
				if d.settled.Load() && !same(res, last[r.name]) && ctx.Err() == nil {
					out.event(r.name, d.describe(res))
					changes++
				}
				done = done && same(res, want[r.name])
			}
			if s.until != nil && done {
				done = s.until()
			}
			if i == 0 {
				// Start from a deployment where every controller sees
				// every region alive, not only the DNS answers right.
				for _, c := range d.ctrls {
					done = done && c.dead.Load() == 0
				}
			}
			last = got
			if done {
				break
			}
			t := time.NewTimer(poll)
			select {
			case <-ctx.Done():
				t.Stop()
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return fmt.Errorf("step %d (%s) did not converge within -timeout %s", i, s.slug, d.opts.timeout)
				}
				return ctx.Err()
			case <-t.C:
			}
		}
		took := time.Since(began)
		d.settled.Store(true)
		out.table(d, i, s.title, took, last)
		if s.slug == "region-failure" {
			out.line("  (bound %s: %s to notice the gateways and stop beating, %s until the last beats are stale, %s to read them, %s until the script looks)",
				d.regionBound(), d.opts.interval, d.opts.healthy+d.opts.interval, d.opts.interval, d.poll())
		}
		out.line("STEP %d %s converged=%s answer-changes=%d", i, s.slug, took.Round(time.Millisecond), changes)
		out.line("")
		if d.afterStep != nil {
			d.afterStep(i, s.slug, d)
		}
		if i < len(steps)-1 && d.opts.pause > 0 {
			t := time.NewTimer(d.opts.pause)
			select {
			case <-ctx.Done():
				t.Stop()
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return fmt.Errorf("-timeout %s ran out during the %s pause after step %d (%s); the timeline needs longer", d.opts.timeout, d.opts.pause, i, s.slug)
				}
				return ctx.Err()
			case <-t.C:
			}
		}
	}
	if d.opts.throttle {
		out.note("done: the gateway and the region failed over and came back; a throttled controller self-healed")
	} else {
		out.note("done: the gateway and the region failed over and came back")
	}
	return nil
}

// throttleStep throttles the first controller's heartbeat writes until its
// publisher self-heals, then lifts the throttle and waits for the
// publisher to recover: the answers must not change meanwhile.
func (d *deployment) throttleStep(out *printer) step {
	c := d.ctrls[0]
	lifted := false
	return step{
		slug:  "throttle",
		title: fmt.Sprintf("%s's heartbeat writes are throttled until it self-heals: no failover", c.cl.name),
		act:   func() { c.throttle.on.Store(true) },
		until: func() bool {
			recovering := c.events.anyRecovering()
			if !lifted {
				if recovering {
					lifted = true
					c.throttle.on.Store(false)
					out.note("the provider stops throttling " + c.cl.name)
				}
				return false
			}
			return !recovering
		},
	}
}

// poll is how often the script resolves the name from every region.
func (d *deployment) poll() time.Duration { return max(d.opts.interval/4, 25*time.Millisecond) }

// regionBound is the longest a region's failure may take to show in the
// answers, with an in-memory zone (no write latency): the controllers
// notice the failed gateways at their next tick (until then the publisher
// may write one more beat), the last beats go stale after HealthyDuration
// + SkewTolerance, a controller reads them at its next tick and repoints
// the global name at once, and the script looks at its next poll.
func (d *deployment) regionBound() time.Duration {
	return d.opts.interval + d.rules().DetectionBound(false, d.opts.interval) + d.poll()
}

// describe renders a resolution on one line: the chain and the addresses.
func (d *deployment) describe(r resolution) string {
	if r.err != nil {
		return "error: " + r.err.Error()
	}
	chain, addrs := d.chain(r), joinAddrs(r.addrs)
	if addrs == "" {
		addrs = "(no address)"
	}
	return chain + "   " + addrs
}

// chain renders the CNAME chain with short names and says which record
// answered: "edge.global → edge.local (regional)".
func (d *deployment) chain(r resolution) string {
	parts := []string{d.names.short(d.names.app)}
	for _, n := range r.chain {
		parts = append(parts, d.names.short(n))
	}
	s := strings.Join(parts, " → ")
	switch r.target() {
	case d.topo.RegionalName():
		s += "  (regional)"
	case d.topo.FailoverName():
		s += "  (failover)"
	}
	return s
}

// printer writes the live view: a header, a timeline with times relative
// to the start, and a table per step. It is safe for concurrent use.
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

// stamped prints a timeline line; the time is read under the lock, so the
// timeline's times never go backwards.
func (p *printer) stamped(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "  %+7.2fs  ", time.Since(p.start).Seconds())
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *printer) event(who, what string) { p.stamped("%-11s %s", who, what) }

func (p *printer) note(s string) { p.stamped("▶ %s", s) }

// table prints how httpbin.<zone> resolves from each region.
func (p *printer) table(d *deployment, i int, title string, took time.Duration, got map[string]resolution) {
	rows := [][3]string{{"from", d.names.app + " →", "A records"}}
	for _, r := range d.regions {
		res := got[r.name]
		addrs := joinAddrs(res.addrs)
		if res.err != nil {
			addrs = res.err.Error()
		}
		rows = append(rows, [3]string{r.name, d.chain(res), addrs})
	}
	w0, w1 := 0, 0
	for _, r := range rows {
		w0, w1 = max(w0, len(r[0])), max(w1, len([]rune(r[1])))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  ┌─ step %d · %s  (converged in %s)\n", i, title, took.Round(time.Millisecond))
	for _, r := range rows {
		fmt.Fprintf(&b, "  │ %-*s  %s%s  %s\n", w0, r[0], r[1], strings.Repeat(" ", w1-len([]rune(r[1]))), r[2])
	}
	b.WriteString("  └─")
	p.line("%s", b.String())
}

// header describes the deployment.
func (p *printer) header(d *deployment, metricsURL string) {
	o := d.opts
	p.line("gslbkit multiregion — the heartbeat controller's CNAME topology, %d regions × %d clusters × %d gateways",
		o.regions, o.clusters, o.gateways)
	p.line("")
	where := "in memory: one shared global zone, one private local zone per region (split horizon)"
	if o.provider == "rfc2136" {
		where = fmt.Sprintf("one RFC 2136 server (%s), zone %s; each region's view of %s is a subtree of it",
			o.rfc.Server, d.names.global, d.names.local)
	}
	p.line("  zones    %s", where)
	p.line("  names    %s CNAME %s", d.names.app, d.topo.GlobalName())
	p.line("           %s CNAME %s  (or the failover name while a region is dead)", d.topo.GlobalName(), d.topo.RegionalName())
	p.line("           %s A  each region's healthy gateways, in its own view of %s", d.topo.RegionalName(), d.names.local)
	p.line("           %s A  every healthy gateway of every live region", d.topo.FailoverName())
	p.line("  beats    every %s, signed; fresh for %s + %s skew; a region is dead when all its clusters' global beats are stale",
		o.interval, o.healthy, o.interval)
	p.line("")
	for _, r := range d.regions {
		var cs []string
		for _, c := range r.clusters {
			var gs []string
			for _, g := range c.gateways {
				gs = append(gs, g.addr.String())
			}
			cs = append(cs, fmt.Sprintf("%s [%s]", c.name, strings.Join(gs, " ")))
		}
		view := d.views[r.name]
		p.line("  %-10s %s  (%s)", r.name, strings.Join(cs, "  "), view.describe(d.names.local))
	}
	if len(d.dnsAddrs) > 0 {
		p.line("")
		p.line("  dig it   (each region's view on its own port, while this runs; -stay keeps it running)")
		for _, r := range d.regions {
			host, port, _ := strings.Cut(d.dnsAddrs[r.name], ":")
			p.line("           %-10s dig @%s -p %s %s A", r.name, host, port, d.names.app)
		}
	}
	if metricsURL != "" {
		p.line("")
		p.line("  metrics  %s", metricsURL)
	}
	p.line("")
}
