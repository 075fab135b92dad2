package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/internal/jsontime"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
)

// ReaderConfig configures a Reader of one scope's zone.
type ReaderConfig struct {
	// Scope is the scope read (it is covered by beat signatures). Required.
	Scope Scope `json:"scope"`
	// Zone is the zone holding the beats. Required.
	Zone string `json:"zone"`
	// Prefix is the beat records' label prefix; "" means DefaultPrefix.
	Prefix string `json:"prefix,omitempty"`
	// Rules are the scope's timings; Rules.ReconcileInterval is also the
	// read interval of Run. Default DefaultRules.
	Rules Rules `json:"rules"`
	// ForgetAfter drops a cluster whose record has been missing this long
	// (so a decommissioned region stops counting as failed over). Default
	// 10 min; allowed Rules.HealthyDuration – 30 days.
	ForgetAfter time.Duration `json:"forgetAfter"`
}

// DefaultReaderConfig returns a config reading scope in zone with
// DefaultRules and a 10-minute ForgetAfter.
func DefaultReaderConfig(scope Scope, zone string) ReaderConfig {
	return ReaderConfig{Scope: scope, Zone: zone, Rules: DefaultRules(), ForgetAfter: 10 * time.Minute}
}

// withDefaults fills the zero fields that take a default: the Rules' and
// ForgetAfter.
func (c ReaderConfig) withDefaults() ReaderConfig {
	c.Rules = c.Rules.withDefaults()
	if c.ForgetAfter == 0 {
		c.ForgetAfter = 10 * time.Minute
	}
	return c
}

// Validate reports the first field out of range, as a *FieldError naming
// it, its value and the allowed range; zero fields that take a default
// take it first.
func (c ReaderConfig) Validate() error {
	c = c.withDefaults()
	if !c.Scope.Valid() {
		return fieldErr("scope", c.Scope, fielderr.OneOf("local", "global"))
	}
	if err := dnsname.Check(c.Zone); err != nil {
		return fieldErr("zone", c.Zone, dnsname.NameRule)
	}
	if err := (Naming{Prefix: c.Prefix}).CheckPrefix(); err != nil {
		return fieldErr("prefix", c.Prefix, prefixRule)
	}
	if err := c.Rules.validate("rules."); err != nil {
		return err
	}
	if f := c.ForgetAfter; f < c.Rules.HealthyDuration || f > 30*24*time.Hour {
		return fieldErr("forgetAfter", c.ForgetAfter, "[rules.healthyDuration ("+fielderr.Duration(c.Rules.withDefaults().HealthyDuration)+"), 720h], or 0 for the default (10m)")
	}
	return nil
}

// ReaderOptions are a reader's collaborators.
type ReaderOptions struct {
	// Keyring verifies beats; with keys, unsigned and badly signed beats are
	// rejected. nil accepts unsigned beats.
	Keyring *Keyring
	// Observer receives events; nil means nobody listens.
	Observer Observer
	// Logger logs rejected beats and read failures; nil is quiet.
	Logger *slog.Logger
	// Now is Run's clock; nil means time.Now.
	Now func() time.Time
}

// Reader reads a zone's beats and judges every cluster and region: fresh
// or stale and why, healthy regions, failovers in progress. It remembers
// the clusters it has seen, so a cluster whose record disappears is
// reported missing (and its region unhealthy) rather than silently
// forgotten, until ForgetAfter.
//
// One goroutine at a time owns the reader's memory: Read and Run return
// ErrRunning while another Read or Run is in progress. Last is safe from
// any goroutine.
type Reader struct {
	cfg    ReaderConfig
	opts   ReaderOptions
	naming Naming
	getter libdns.RecordGetter
	known  map[string]*clusterMemory
	last   atomic.Pointer[Snapshot]
	busy   atomic.Bool
}

type clusterMemory struct {
	region       string
	beat         Beat
	hasBeat      bool
	missingSince time.Time
}

// NewReader validates cfg and returns a reader of getter's zone. It starts nothing.
func NewReader(cfg ReaderConfig, getter libdns.RecordGetter, opts ReaderOptions) (*Reader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if getter == nil {
		return nil, fieldErr("getter", "nil", "a libdns.RecordGetter")
	}
	r := &Reader{cfg: cfg.withDefaults(), opts: opts, naming: Naming{Prefix: cfg.Prefix}, known: map[string]*clusterMemory{}}
	r.getter = getter
	r.last.Store(&Snapshot{Scope: cfg.Scope})
	return r, nil
}

// Last returns the snapshot of the last read (empty before the first).
func (r *Reader) Last() Snapshot {
	if s := r.last.Load(); s != nil {
		return *s
	}
	return Snapshot{}
}

// Run reads the zone at once and then every Rules.ReconcileInterval until
// ctx is done, and returns nil. Read failures are reported through
// ReadDone events and do not stop it.
//
// Errors: ErrRunning while another Run or Read is in progress;
// ErrNotConfigured for a zero Reader (not made by NewReader).
func (r *Reader) Run(ctx context.Context) error {
	if r.getter == nil {
		return ErrNotConfigured
	}
	if !r.busy.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer r.busy.Store(false)
	t := time.NewTicker(r.cfg.Rules.ReconcileInterval)
	defer t.Stop()
	for {
		r.read(ctx, r.now())
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (r *Reader) now() time.Time {
	if r.opts.Now != nil {
		return r.opts.Now()
	}
	return time.Now()
}

// Read reads the zone once and judges it at now, emits the events that
// lead from the previous snapshot to this one, and returns the snapshot.
// When the zone cannot be read it judges the beats last seen at now and
// returns that snapshot together with the error.
func (r *Reader) Read(ctx context.Context, now time.Time) (Snapshot, error) {
	if r.getter == nil {
		return Snapshot{}, ErrNotConfigured
	}
	if !r.busy.CompareAndSwap(false, true) {
		return Snapshot{}, ErrRunning
	}
	defer r.busy.Store(false)
	s := r.read(ctx, now)
	return s, s.Err
}

// seen is what one read found at a cluster's name.
type seen struct {
	beat   Beat // the freshest valid beat, when ok
	ok     bool
	reason Reason // why the first rejected value was rejected, when !ok
	err    error
}

func (r *Reader) read(ctx context.Context, now time.Time) Snapshot {
	recs, err := r.getter.GetRecords(ctx, r.cfg.Zone)
	var current map[string]*seen
	var evs []Event
	if err != nil {
		err = fmt.Errorf("heartbeat: reading zone %q: %w", r.cfg.Zone, err)
	} else {
		current, evs = r.collect(ctx, recs, now)
		r.remember(current, now)
	}
	snap := Snapshot{Scope: r.cfg.Scope, At: now, Err: err, Clusters: r.judge(current, err == nil, now)}
	snap.Regions = regions(snap.Clusters)
	for _, st := range snap.Clusters {
		// A remembered beat that became future because the clock went
		// back; beats read as future were rejected (and counted) in collect.
		if cur := current[st.Cluster]; st.Reason == ReasonFuture && err == nil && cur != nil && cur.ok {
			evs = append(evs, BeatRejected{At: now, Scope: r.cfg.Scope, Cluster: st.Cluster, Reason: ReasonFuture, Err: st.Err})
		}
	}
	fresh := 0
	for _, c := range snap.Clusters {
		if c.Fresh {
			fresh++
		}
	}
	for _, e := range evs {
		if _, ok := e.(BeatRejected); ok {
			snap.Rejected++
		}
	}
	evs = append(evs, diff(*r.last.Load(), snap)...)
	r.last.Store(&snap)
	evs = append(evs, ReadDone{At: now, Scope: r.cfg.Scope, Fresh: fresh, Stale: len(snap.Clusters) - fresh, Rejected: snap.Rejected, Err: err})
	if r.opts.Observer != nil {
		for _, e := range evs {
			r.opts.Observer.Observe(e)
		}
	}
	return snap
}

// collect parses and verifies the beat records among recs, keeping per
// cluster the freshest valid beat, or why its values were rejected.
func (r *Reader) collect(ctx context.Context, recs []libdns.Record, now time.Time) (map[string]*seen, []Event) {
	current := map[string]*seen{}
	var evs []Event
	for _, rec := range recs {
		rr := rec.RR()
		if rr.Type != "TXT" {
			continue
		}
		c, ok := r.naming.Cluster(rr.Name, r.cfg.Zone)
		if !ok {
			continue
		}
		b, berr := r.opts.Keyring.Open(r.cfg.Scope, unquote(rr.Data))
		if berr == nil && !equalFoldASCII(b.Cluster, c) {
			berr = beatErr(ErrMalformed, "c", "names cluster "+b.Cluster+", the record belongs to "+c)
		}
		cur := current[c]
		if cur == nil {
			cur = &seen{}
			current[c] = cur
		}
		if berr != nil {
			reason := ReasonMalformed
			if errors.Is(berr, ErrUnsigned) || errors.Is(berr, ErrUnknownKey) || errors.Is(berr, ErrBadSignature) {
				reason = ReasonBadSignature
			}
			evs = append(evs, BeatRejected{At: now, Scope: r.cfg.Scope, Cluster: c, Reason: reason, Err: berr})
			if r.opts.Logger != nil {
				r.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "heartbeat beat rejected",
					slog.String("scope", r.cfg.Scope.String()), slog.String("cluster", c), slog.Any("err", berr))
			}
			if !cur.ok && cur.err == nil {
				cur.reason, cur.err = reason, berr
			}
			continue
		}
		// A beat stamped further ahead than any legitimate beat (a self-heal
		// beat plus the skew tolerance) is rejected here, before the newest
		// is chosen: otherwise it would win over the fresh beat beside it
		// and then be judged future, hiding that fresh beat.
		if f := r.cfg.Rules.Judge(b.Time, now); f.Reason == ReasonFuture {
			ferr := fmt.Errorf("%w: stamped %v ahead, allowed %v", ErrFuture, -f.Age, r.cfg.Rules.SelfHealInterval+r.cfg.Rules.SkewTolerance)
			evs = append(evs, BeatRejected{At: now, Scope: r.cfg.Scope, Cluster: c, Reason: ReasonFuture, Err: ferr})
			if r.opts.Logger != nil {
				r.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "heartbeat beat rejected",
					slog.String("scope", r.cfg.Scope.String()), slog.String("cluster", c), slog.Any("err", ferr))
			}
			if !cur.ok && cur.err == nil {
				cur.reason, cur.err = ReasonFuture, ferr
			}
			continue
		}
		if !cur.ok || b.Time.After(cur.beat.Time) {
			*cur = seen{beat: b, ok: true}
		}
	}
	return current, evs
}

// remember updates the reader's memory with a successful read: regions and
// last valid beats of the clusters present; since when the others have
// been missing, forgetting those missing longer than ForgetAfter.
func (r *Reader) remember(current map[string]*seen, now time.Time) {
	for c, cur := range current {
		m := r.known[c]
		if m == nil {
			m = &clusterMemory{}
			r.known[c] = m
		}
		m.missingSince = time.Time{}
		if cur.ok {
			m.region, m.beat, m.hasBeat = cur.beat.Region, cur.beat, true
		}
	}
	for c, m := range r.known {
		if current[c] != nil {
			continue
		}
		if m.missingSince.IsZero() {
			m.missingSince = now
		}
		if now.Sub(m.missingSince) > r.cfg.ForgetAfter {
			delete(r.known, c)
		}
	}
}

// judge returns every known cluster's status at now, sorted by name. When
// the read failed (!readOK), clusters are judged by the beats last seen.
func (r *Reader) judge(current map[string]*seen, readOK bool, now time.Time) []ClusterStatus {
	out := make([]ClusterStatus, 0, len(r.known))
	for c, m := range r.known {
		st := ClusterStatus{Cluster: c, Region: m.region}
		if m.hasBeat {
			st.Beat = m.beat
		}
		cur := current[c]
		switch {
		case readOK && cur != nil && !cur.ok: // present but rejected
			st.Reason, st.Err = cur.reason, cur.err
		case readOK && cur == nil: // gone
			st.Reason = ReasonMissing
		case m.hasBeat: // a valid beat now, or the last one seen when the read failed
			f := r.cfg.Rules.Judge(m.beat.Time, now)
			st.Fresh, st.Reason, st.Age, st.StaleAt = f.Fresh, f.Reason, f.Age, f.StaleAt
			st.SelfHealing = m.beat.SelfHeal
			if f.Reason == ReasonFuture {
				st.Err = fmt.Errorf("%w: stamped %v ahead, allowed %v", ErrFuture, -f.Age, r.cfg.Rules.SelfHealInterval+r.cfg.Rules.SkewTolerance)
			}
		default:
			st.Reason = ReasonMissing
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b ClusterStatus) int { return strings.Compare(a.Cluster, b.Cluster) })
	return out
}

// MarshalJSON writes ReaderConfig with its durations as strings such as "10s".
func (c ReaderConfig) MarshalJSON() ([]byte, error) {
	type plain ReaderConfig
	return jsontime.Marshal(plain(c))
}

// UnmarshalJSON reads ReaderConfig, its durations as strings such as "10s" or as
// numbers of seconds. Unknown keys, and keys in the wrong case, are errors.
func (c *ReaderConfig) UnmarshalJSON(b []byte) error {
	type plain ReaderConfig
	return jsontime.Unmarshal(b, (*plain)(c))
}
