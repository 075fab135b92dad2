package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/backoff"
	"github.com/gslbkit/gslb/internal/errclass"
)

// Store is what a publisher needs of a zone: write its beat, read it back.
// Any libdns provider that gets and sets records will do; its methods
// must be safe for concurrent use and honour context cancellation.
type Store interface {
	libdns.RecordGetter
	libdns.RecordSetter
}

// Verdict is the local health verdict a publisher acts on.
type Verdict struct {
	// Healthy: this cluster's gateways are healthy; beats are written only
	// while it is true.
	Healthy bool
	// Gateways is the number of healthy gateways written in the beat,
	// 0–MaxGateways (0 = not reported in a version-1 beat).
	Gateways int
	// Total is the cluster's number of gateways, served or not,
	// 0–MaxGateways (0 = not reported). With Config.BeatVersion 2 and
	// Total > 0 the beat is a version-2 beat carrying Gateways of Total;
	// otherwise Total is not written.
	Total int
}

// Options are a publisher's collaborators.
type Options struct {
	// Local and Global are the zones' stores; each is required when its
	// scope's zone is set in Config.
	Local, Global Store
	// Keyring signs beats; nil writes unsigned beats.
	Keyring *Keyring
	// Observer receives events; nil means nobody listens.
	Observer Observer
	// Logger logs write failures and recoveries; nil is quiet.
	Logger *slog.Logger
	// Now is the publisher's clock; nil means time.Now. Tests give
	// clusters skewed clocks through it.
	Now func() time.Time
	// Rand returns uniform floats in [0, 1) for back-off jitter and must be
	// safe for concurrent use; nil means math/rand/v2.Float64.
	Rand func() float64
}

// ErrRunning is returned by Run when the publisher or reader is already running.
var ErrRunning = errors.New("heartbeat: already running")

// Publisher writes this cluster's beats, one loop per enabled scope: every
// reconcile interval, while the verdict is healthy, it writes a beat (up to
// MaxAttempts attempts with jittered back-off, or SelfHealAttempts closer
// together while the beat is a self-heal beat, all starting within the
// interval and stopping at the first success, so at most one successful
// write per scope per interval), reads its own beat back and applies the
// self-heal rule (see Healer). While the verdict is unhealthy it writes
// nothing, and peers see its beat go stale.
//
// The verdict starts unhealthy; call SetVerdict. Methods are safe for
// concurrent use. NewPublisher starts nothing; Run owns every goroutine.
type Publisher struct {
	cfg     Config
	opts    Options
	label   string
	verdict atomic.Pointer[Verdict]
	running atomic.Bool
	recov   [3]atomic.Bool
}

// NewPublisher validates cfg and returns a publisher. It copies cfg and
// never changes it.
func NewPublisher(cfg Config, opts Options) (*Publisher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.LocalZone != "" && opts.Local == nil {
		return nil, fieldErr("Options.Local", "nil", fmt.Sprintf("a store, since localZone %q is set", cfg.LocalZone))
	}
	if cfg.GlobalZone != "" && opts.Global == nil {
		return nil, fieldErr("Options.Global", "nil", fmt.Sprintf("a store, since globalZone %q is set", cfg.GlobalZone))
	}
	label, err := Naming{Prefix: cfg.Prefix}.Label(cfg.Cluster)
	if err != nil {
		return nil, err
	}
	p := &Publisher{cfg: cfg.withDefaults(), opts: opts, label: label}
	p.verdict.Store(&Verdict{})
	return p, nil
}

// SetVerdict sets the local verdict the next interval acts on. Gateways
// and Total outside 0–MaxGateways are clamped into it, and Gateways to at
// most Total when Total > 0.
func (p *Publisher) SetVerdict(v Verdict) {
	v.Gateways = min(max(v.Gateways, 0), MaxGateways)
	v.Total = min(max(v.Total, 0), MaxGateways)
	if v.Total > 0 {
		v.Gateways = min(v.Gateways, v.Total)
	}
	p.verdict.Store(&v)
}

// Verdict returns the current local verdict (the zero Verdict before the
// first SetVerdict).
func (p *Publisher) Verdict() Verdict {
	if v := p.verdict.Load(); v != nil {
		return *v
	}
	return Verdict{}
}

// Recovering reports whether scope s is recovering from rate limiting.
func (p *Publisher) Recovering(s Scope) bool {
	if !s.Valid() {
		return false
	}
	return p.recov[s].Load()
}

// Run publishes until ctx is done, then waits for its goroutines and
// returns nil. It returns ErrRunning if the publisher is already running.
// A zero Publisher (not made by NewPublisher) returns ErrNotConfigured.
func (p *Publisher) Run(ctx context.Context) error {
	if p.label == "" {
		return ErrNotConfigured
	}
	if !p.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer p.running.Store(false)
	var wg sync.WaitGroup
	for _, s := range []Scope{Local, Global} {
		if p.cfg.Zone(s) == "" {
			continue
		}
		store := p.opts.Local
		if s == Global {
			store = p.opts.Global
		}
		sp := &scopePublisher{p: p, scope: s, zone: p.cfg.Zone(s), store: store, rules: p.cfg.Rules(s)}
		sp.healer = NewHealer(sp.rules)
		wg.Go(func() { sp.run(ctx) })
	}
	wg.Wait()
	return nil
}

func (p *Publisher) now() time.Time {
	if p.opts.Now != nil {
		return p.opts.Now()
	}
	return time.Now()
}

func (p *Publisher) emit(e Event) {
	if p.opts.Observer != nil {
		p.opts.Observer.Observe(e)
	}
}

type randFunc func() float64

func (f randFunc) Float64() float64 { return f() }

// scopePublisher is the state one scope's goroutine owns.
type scopePublisher struct {
	p          *Publisher
	scope      Scope
	zone       string
	store      Store
	rules      Rules
	healer     *Healer
	publishing bool
	first      bool
	buf        []byte
}

func (sp *scopePublisher) run(ctx context.Context) {
	t := time.NewTicker(sp.rules.ReconcileInterval)
	defer t.Stop()
	sp.first = true
	for {
		sp.tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tick is one reconcile interval: write (with retries), read back, heal.
func (sp *scopePublisher) tick(ctx context.Context) {
	p := sp.p
	start := time.Now() // the bubble's or real clock: bounds the attempts
	v := p.Verdict()
	if v.Healthy != sp.publishing || sp.first {
		sp.first = false
		sp.publishing = v.Healthy
		now := p.now()
		p.emit(PublishingChanged{At: now, Scope: sp.scope, Publishing: v.Healthy})
		// A beat left stale by an unhealthy spell is no throttle: start afresh.
		if sp.healer.Reset() {
			sp.setRecovering(now, false)
		}
	}
	if !v.Healthy {
		return
	}
	pol := p.cfg.attempts(sp.rules.ReconcileInterval)
	var rnd backoff.Rand = randFunc(rand.Float64)
	if p.opts.Rand != nil {
		rnd = randFunc(p.opts.Rand)
	}
	deadline := start.Add(sp.rules.ReconcileInterval)
	var delay time.Duration // before the next attempt
	for attempt := 1; ; attempt++ {
		if attempt > 1 && !sleep(ctx, delay) {
			break
		}
		now := p.now()
		if attempt > pol.limit(sp.healer.needsSelfHeal(now)) {
			// Only when the clock stepped back while we slept: the attempt
			// announced as a self-heal attempt would be a normal one.
			break
		}
		plan, changed := sp.healer.Plan(now)
		if changed {
			sp.setRecovering(now, true)
		}
		b := Beat{Cluster: p.cfg.Cluster, Region: p.cfg.Region, Time: plan.Time, Gateways: v.Gateways, SelfHeal: plan.SelfHeal}
		if p.cfg.BeatVersion == 2 {
			b.Total = v.Total
		}
		var err error
		sp.buf, err = p.opts.Keyring.AppendSeal(sp.buf[:0], sp.scope, b)
		if err != nil { // cannot happen with a validated config; do not retry
			p.emit(WriteFailed{At: now, Scope: sp.scope, Attempt: attempt, SelfHeal: plan.SelfHeal, Err: err})
			return
		}
		rec := libdns.TXT{Name: sp.label(), TTL: p.cfg.TTL, Text: string(sp.buf)}
		_, err = sp.store.SetRecords(ctx, sp.zone, []libdns.Record{rec})
		if err == nil {
			sp.healer.Written(plan.Time, plan.SelfHeal)
			b.KeyID = p.opts.Keyring.SigningKeyID()
			p.emit(BeatWritten{At: p.now(), Scope: sp.scope, Beat: b, Attempt: attempt})
			break
		}
		if ctx.Err() != nil {
			return
		}
		class := errclass.Of(err)
		delay = pol.delay(attempt, plan.SelfHeal, rnd)
		// The next attempt's limit is the one of the beat it will write:
		// a normal beat ages into a self-heal beat, never the reverse.
		nextSelfHeal := plan.SelfHeal || sp.healer.needsSelfHeal(p.now().Add(delay))
		retrying := class.Retryable() && attempt < pol.limit(nextSelfHeal) && time.Now().Add(delay).Before(deadline)
		p.emit(WriteFailed{At: p.now(), Scope: sp.scope, Attempt: attempt, SelfHeal: plan.SelfHeal,
			Throttled: class == errclass.Throttled, Retrying: retrying, Err: err})
		if p.opts.Logger != nil {
			p.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "heartbeat write failed",
				slog.String("scope", sp.scope.String()), slog.Int("attempt", attempt),
				slog.String("class", class.String()), slog.Any("err", err))
		}
		if !retrying {
			break
		}
	}
	sp.readBack(ctx)
}

func (sp *scopePublisher) label() string { return sp.p.label }

// readBack reads the zone and feeds the healer what is at our name.
func (sp *scopePublisher) readBack(ctx context.Context) {
	p := sp.p
	recs, err := sp.store.GetRecords(ctx, sp.zone)
	now := p.now()
	if err != nil {
		if ctx.Err() == nil {
			p.emit(OwnBeatRead{At: now, Scope: sp.scope, Err: fmt.Errorf("heartbeat: reading zone %q: %w", sp.zone, err)})
		}
		return
	}
	naming := Naming{Prefix: p.cfg.Prefix}
	var (
		best    Beat
		found   bool
		lastErr error
	)
	for _, r := range recs {
		rr := r.RR()
		if rr.Type != "TXT" {
			continue
		}
		c, ok := naming.Cluster(rr.Name, sp.zone)
		if !ok || c != sp.p.label[len(naming.prefix()):] {
			continue
		}
		b, err := p.opts.Keyring.Open(sp.scope, unquote(rr.Data))
		if err == nil && !equalFoldASCII(b.Cluster, c) {
			err = beatErr(ErrMalformed, "c", "names cluster "+b.Cluster+", the record belongs to "+c)
		}
		if err != nil {
			lastErr = err
			continue
		}
		if !found || b.Time.After(best.Time) {
			best, found = b, true
		}
	}
	ev := OwnBeatRead{At: now, Scope: sp.scope, Found: found}
	if found {
		ev.Beat, ev.Age = best, now.Sub(best.Time)
	} else {
		ev.Err = lastErr
	}
	p.emit(ev)
	if sp.healer.ReadBack(best.Time, best.SelfHeal, found) {
		sp.setRecovering(now, sp.healer.Recovering())
	}
}

func (sp *scopePublisher) setRecovering(now time.Time, r bool) {
	sp.p.recov[sp.scope].Store(r)
	sp.p.emit(RecoveringChanged{At: now, Scope: sp.scope, Recovering: r})
	if l := sp.p.opts.Logger; l != nil {
		l.LogAttrs(context.Background(), slog.LevelInfo, "heartbeat recovering from rate limiting",
			slog.String("scope", sp.scope.String()), slog.Bool("recovering", r))
	}
}

// sleep waits d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
