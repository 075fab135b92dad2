package record

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libdns/libdns"
	"golang.org/x/time/rate"

	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/internal/fielderr"
)

// ZoneEditor is what the reconciler needs from a DNS host: read a zone, set
// RRsets, delete records — the libdns interfaces, which every libdns
// provider implements. Implementations must be safe for concurrent use and
// honour context cancellation.
//
// It is provider.Provider without libdns.RecordAppender (the reconciler
// never appends), so every provider.Provider, every adapter in
// gslb/provider and any libdns provider with those three methods is a
// ZoneEditor.
type ZoneEditor interface {
	libdns.RecordGetter
	libdns.RecordSetter
	libdns.RecordDeleter
}

// Replacer is an optional capability of a ZoneEditor: delete some records and
// set others in one atomic call (an RFC 2136 UPDATE, a Route 53 change
// batch, a Cloudflare batch: provider/rfc2136, provider/route53 and
// provider/cloudflare implement it). With it, a type switch leaves no window and a reconcile that both
// withdraws and sets in one zone makes one call instead of two. The deleted
// records are exactly as GetRecords returned them; the set ones follow
// libdns SetRecords semantics. It must be safe for concurrent use and
// honour context cancellation.
type Replacer interface {
	ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error
}

// ErrRunning is returned by Run when the reconciler is already running.
var ErrRunning = errors.New("record: reconciler already running")

// Options are the reconciler's collaborators; the zero value is quiet and
// builds its own limiter from the Config.
type Options struct {
	// Observer receives events; nil means nobody listens.
	Observer Observer
	// Logger receives logs; nil means quiet.
	Logger *slog.Logger
	// Limiter, when set, caps provider calls (reads and writes) instead of
	// a limiter built from Config.WritesPerSecond and WriteBurst; share one
	// between reconcilers that use the same provider account.
	Limiter *rate.Limiter
	// DryRunOutput receives the plan of each reconcile in dry-run mode;
	// nil means the plan is logged (at Info) instead.
	DryRunOutput io.Writer
	// ProviderName names the provider in read-back conflicts
	// (ReadBackError); empty means its Go type ("*route53.Provider").
	ProviderName string
	// ConflictAfter is how many applies in a row must read back an RRset
	// different from what was written before the difference is reported
	// as a conflict (a ReadBackEvent with Conflict set, an entry in
	// Conflicts, an ErrReadBack error) and the set is no longer rewritten
	// on every reconcile. 0 means DefaultConflictAfter (3); 1 to 100.
	ConflictAfter int
	// FenceToken, when not 0, fences every write of the Reconciler: a
	// number that only grows from one writer to the next (a leader
	// election's term, e.g. a Kubernetes Lease's leaseTransitions), given
	// by the caller. Each write to a zone is then conditional, in the
	// store, on the zone's fence record (Config.FenceName) holding this
	// token: the first reconcile replaces a lower token by this one (a
	// compare-and-set from the value read), and a writer with a lower
	// token is refused by the store (ErrFenced). The ZoneEditor must be a
	// Fencer (New returns an error wrapping ErrCannotFence otherwise).
	// SetFenceToken raises it later. 0 means no fencing.
	FenceToken uint64
	// NoReadBack turns off the read-back: by default, after a reconcile
	// wrote changes, the reconciler reads one zone it wrote (one
	// GetRecords call, under the limiter) and compares the RRsets it
	// changed with what it wrote.
	NoReadBack bool
}

// Report is the outcome of one reconcile.
type Report struct {
	// Changes is the plan that was applied (or printed, in dry-run mode).
	Changes Changes
	// Writes is the number of provider write calls made.
	Writes int
	// Held are the RRsets held stale, with the time each was first held.
	Held []HeldStale
	// Pending is true while the latest desired state is not fully applied.
	Pending bool
}

// Reconciler makes zones match the latest desired state, safely: it never
// publishes an empty set, touches only names it owns, writes nothing in a
// steady state, batches the changes of a zone into as few calls as the
// provider allows, caps writes with a rate limiter, retries throttled and
// transient failures with jittered exponential back-off, and re-reads the
// zones periodically to repair drift on the names it owns.
//
// Set may be called from any goroutine at any time; the newest desired
// state replaces the older one (nothing queues). Run reconciles in its own
// loop; callers who drive it themselves call Apply or ReconcileOnce
// instead (or as well): reconciles are serialised. New starts nothing. The
// zero Reconciler is not usable; build one with New.
type Reconciler struct {
	p       ZoneEditor
	atomic  Replacer
	fencer  Fencer
	cfg     Config
	obs     Observer
	log     *slog.Logger
	lim     *rate.Limiter
	out     io.Writer
	running atomic.Bool
	wake    chan struct{}

	mu      sync.Mutex // guards the fields below
	desired map[string]*zoneDesired
	zones   []string
	gen     uint64 // bumped by every Set
	done    uint64 // generation last applied without error
	has     bool
	// token is the fencing token (0: none); fencedAt the token a fence
	// refused (writes stop while fencedAt == token), fenced that fence.
	token, fencedAt uint64
	fenced          *FencedError
	// fenceMu serialises the fenced writes of the Reconciler and its
	// FencedStores; fenceLast holds, per zone, the fence after the last
	// fenced write either made, so neither writes expecting a fence the
	// other has already moved on.
	fenceMu   sync.Mutex
	fenceLast map[string]zoneFence

	recMu sync.Mutex        // one reconcile at a time; guards held
	held  map[Key]time.Time // keys held stale -> since

	conflicts []Refusal // of the last reconcile that planned; guarded by mu

	// Read-back: guarded by recMu.
	readBackOn    bool
	conflictAfter int
	name          string
	mismatch      map[Key]*mismatch
	turn          int // rotates the zone read back among those written
}

// New returns a reconciler writing through p. It validates cfg (errors
// match ErrInvalid) and keeps a copy with its zero fields defaulted; it
// starts nothing.
func New(p ZoneEditor, cfg Config, opts Options) (*Reconciler, error) {
	if p == nil {
		return nil, &FieldError{Path: "provider", Value: "nil", Allowed: "a libdns provider", Err: configSentinel}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.ConflictAfter < 0 || opts.ConflictAfter > 100 {
		return nil, fielderr.New(ErrInvalid, "Options.ConflictAfter", opts.ConflictAfter, fielderr.Range(0, 100)+" (0: the default, 3)")
	}
	cfg = cfg.withDefaults()
	lim := opts.Limiter
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(cfg.WritesPerSecond), cfg.WriteBurst)
	}
	r := &Reconciler{
		p: p, cfg: cfg, obs: opts.Observer, log: opts.Logger, lim: lim, out: opts.DryRunOutput,
		wake: make(chan struct{}, 1),
		held: map[Key]time.Time{},

		readBackOn:    !opts.NoReadBack,
		conflictAfter: cmp.Or(opts.ConflictAfter, DefaultConflictAfter),
		name:          cmp.Or(opts.ProviderName, fmt.Sprintf("%T", p)),
		mismatch:      map[Key]*mismatch{},
	}
	if rp, ok := p.(Replacer); ok && innermostHas[Replacer](p) {
		r.atomic = rp
	}
	if f, ok := p.(Fencer); ok && innermostHas[Fencer](p) {
		r.fencer = f
	}
	if opts.FenceToken > 0 && r.fencer == nil {
		return nil, cannotFence(opts.FenceToken, p)
	}
	r.token = opts.FenceToken
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// innermostHas reports whether every provider p wraps, down to the
// innermost, implements I: a wrapper that forwards a method whatever its
// providers implement says what it wraps with Unwrap() libdns.RecordGetter
// (provider.Wrapped) or Unwrap() []libdns.RecordGetter (provider.Mounts),
// and the capability is that of every provider inside.
func innermostHas[I any](p libdns.RecordGetter) bool {
	return hasDepth[I](p, 0)
}

func hasDepth[I any](p libdns.RecordGetter, depth int) bool {
	if _, ok := p.(I); !ok || depth > 32 { // wrappers do not nest deeper; a cycle stops here
		return false
	}
	switch u := p.(type) {
	case interface{ Unwrap() libdns.RecordGetter }:
		inner := u.Unwrap()
		return inner != nil && hasDepth[I](inner, depth+1)
	case interface{ Unwrap() []libdns.RecordGetter }:
		inner := u.Unwrap()
		for _, q := range inner {
			if q == nil || !hasDepth[I](q, depth+1) {
				return false
			}
		}
		return len(inner) > 0
	}
	return true
}

// Config returns a copy of the reconciler's config.
func (r *Reconciler) Config() Config { return r.cfg }

// Set makes d the desired state, replacing any older one, and wakes Run.
// It validates d (ErrInvalid, naming the field) and keeps its own copy; an
// invalid d changes nothing. Safe for concurrent use; never blocks on I/O.
// A zero Reconciler (not made by New) returns ErrNotConfigured, as do its
// Apply, ReconcileOnce and Run.
func (r *Reconciler) Set(d Desired) error {
	if r.p == nil {
		return ErrNotConfigured
	}
	zones, err := d.normalize(r.cfg.MarkerPrefix, false)
	if err != nil {
		return err
	}
	ownValues(zones)
	r.mu.Lock()
	r.desired = zones
	r.zones = slices.Sorted(maps.Keys(zones))
	r.gen++
	r.has = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return nil
}

// Pending reports whether the latest desired state has not yet been
// applied by a reconcile that met no error.
func (r *Reconciler) Pending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.has && r.done != r.gen
}

// Apply sets d as the desired state and reconciles once. Its error is the
// validation error of d, or the joined read and write errors of the
// reconcile, with a *ReadBackError (ErrReadBack) for each set the
// read-back found different Options.ConflictAfter applies in a row: judge
// them with errors.Is, or with provider.Classify, which reads the
// Throttled() / Temporary() behaviour in their chains. d stays the desired
// state either way, so a later ReconcileOnce or Run finishes the job.
func (r *Reconciler) Apply(ctx context.Context, d Desired) (Report, error) {
	if err := r.Set(d); err != nil {
		return Report{}, err
	}
	return r.ReconcileOnce(ctx)
}

// ReconcileOnce reads the zones of the latest desired state, plans, and
// writes the changes (or prints them, in dry-run mode). It returns the
// joined read and write errors; zones that failed do not stop the others,
// except a throttled error, which stops the writes of this reconcile. With
// no desired state set it does nothing. Safe for concurrent use:
// reconciles are serialised.
func (r *Reconciler) ReconcileOnce(ctx context.Context) (Report, error) {
	if r.p == nil {
		return Report{}, ErrNotConfigured
	}
	rep, errs := r.reconcile(ctx)
	return rep, errors.Join(errs...)
}

// reconcile runs one reconcile and then hands its events to the observer,
// in order, after the reconcile lock is released (so an observer may call
// back into the reconciler).
func (r *Reconciler) reconcile(ctx context.Context) (Report, []error) {
	var evs []Event
	rep, errs := r.reconcileLocked(ctx, func(e Event) { evs = append(evs, e) })
	for _, e := range evs {
		r.emit(e)
	}
	return rep, errs
}

func (r *Reconciler) reconcileLocked(ctx context.Context, emit func(Event)) (Report, []error) {
	r.recMu.Lock()
	defer r.recMu.Unlock()
	r.mu.Lock()
	desired, zones, gen, has := r.desired, r.zones, r.gen, r.has
	token, fencedAt, fenced := r.token, r.fencedAt, r.fenced
	r.mu.Unlock()
	if !has {
		return Report{}, nil
	}
	if token > 0 && fencedAt == token && !r.cfg.DryRun {
		// Fenced off: no read, no write, until a higher token.
		return Report{Pending: true}, []error{fenced}
	}
	var errs []error
	fail := func(err error) {
		errs = append(errs, err)
		if ctx.Err() != nil {
			return // shutting down: returned, not reported
		}
		c := errclass.Of(err)
		r.log.Warn("record: reconcile error", "err", err, "class", c.String())
		emit(ErrorEvent{At: time.Now(), Err: err, class: c})
	}
	idx := make(map[string]*zoneIndex, len(zones))
	var unread []string
	for _, zn := range zones {
		if err := r.lim.Wait(ctx); err != nil {
			fail(fmt.Errorf("record: waiting for the limiter: %w", err))
			return Report{Pending: true}, errs
		}
		recs, err := r.p.GetRecords(ctx, zn)
		if err != nil {
			fail(&ReadError{Zone: zn, Err: err})
			if ctx.Err() != nil || errclass.Of(err) == errclass.Throttled {
				// Cancelled, or asked to slow down: read no further.
				return Report{Pending: true}, errs
			}
			unread = append(unread, zn)
			continue
		}
		idx[zn] = indexZone(zn, recs, r.cfg.MarkerPrefix)
	}
	if len(idx) == 0 {
		// Nothing could be read: there is no plan to report (not even an
		// empty one), and nothing is known about the zones.
		return Report{Pending: true}, errs
	}
	ch := planZones(desired, idx, r.cfg)
	now := time.Now()
	r.forgetMatched(ch, idx)
	heldBack := r.holdConflicts(&ch, now)
	ch.Refused = append(ch.Refused, heldBack...)
	rep := Report{Changes: ch}
	emit(PlanEvent{At: now, Changes: ch, DryRun: r.cfg.DryRun, Unread: unread})
	rep.Held = r.trackHeld(now, ch.Held, idx)
	for _, h := range rep.Held {
		emit(h)
	}
	for _, ref := range ch.Refused {
		emit(RefusedEvent{At: now, Refusal: ref})
	}
	conflicts := slices.DeleteFunc(slices.Clone(ch.Refused), func(f Refusal) bool { return errors.Is(f.Err, ErrReadBack) })
	defer func() {
		conflicts = append(conflicts, r.conflictRefusals()...)
		r.mu.Lock()
		r.conflicts = conflicts
		r.mu.Unlock()
	}()
	if r.cfg.DryRun {
		r.printPlan(ch)
		rep.Pending = r.finish(gen, errs, 0, false, emit)
		return rep, errs
	}
	// fences are the zones' fences when writes are fenced (nil otherwise).
	var fences map[string]*zoneFence
	if token > 0 {
		fences = make(map[string]*zoneFence, len(idx))
		for _, zn := range zones {
			if zi := idx[zn]; zi != nil {
				f := r.readFence(zi, token)
				if f.newer {
					ferr := &FencedError{Zone: zn, Token: token, Holder: f.was.Text}
					fail(ferr)
					r.fenceOff(ferr, emit)
					rep.Pending = r.finish(gen, errs, 0, false, emit)
					return rep, errs
				}
				fences[zn] = &f
			}
		}
	}
	if !ch.Empty() {
		r.log.Info("record: applying plan", "zones", len(ch.Zones), "changes", ch.Len())
	}
	// failed holds the names whose writes failed this reconcile: sets in
	// later zones that need them are held back (RRSet.Needs).
	failed := map[Name]error{}
	var written []ZoneChanges // zones whose every write succeeded
	holdBack := func(c Change, needs Key, err error) {
		ref := Refusal{Key: c.Key, Err: &DependencyError{Key: c.Key, Needs: needs, Err: err}}
		conflicts = append(conflicts, ref)
		emit(RefusedEvent{At: time.Now(), Refusal: ref})
	}
zones:
	for _, zc := range zoneOrder(ch.Zones) {
		zc = dropFailedDeps(zc, failed, holdBack)
		var window time.Time // when a switch's old type was deleted
		steps := zc.Steps(r.atomic != nil || fences != nil)
		if len(steps) > 0 {
			written = append(written, zc)
		}
		for si, st := range steps {
			if err := r.lim.Wait(ctx); err != nil {
				fail(fmt.Errorf("record: waiting for the write limiter: %w", err))
				break zones
			}
			err := r.write(ctx, zc.Zone, st, fences[zc.Zone])
			rep.Writes++
			end := time.Now()
			emit(WriteEvent{At: end, Zone: zc.Zone, Kind: st.Kind, Records: len(st.Set) + len(st.Delete), Err: err})
			if st.Kind == StepDelete && st.Switch && err == nil {
				window = end
			}
			if st.Kind == StepSet && !st.Claim && !window.IsZero() {
				emit(SwitchWindow{Zone: zc.Zone, Keys: switchKeys(zc), Start: window, End: end, Closed: err == nil})
			}
			if err != nil {
				fail(err)
				if ferr, ok := errors.AsType[*FencedError](err); ok {
					r.fenceOff(ferr, emit)
					written = written[:len(written)-1]
					break zones
				}
				for _, c := range zc.Changes {
					failed[c.Key.Node()] = err
				}
				if slices.ContainsFunc(steps[si+1:], func(s Step) bool { return s.Dependents }) {
					for _, c := range zc.Changes {
						if k, ok := zoneDependency(zc, c); ok {
							holdBack(c, k, err)
						}
					}
				}
				if errclass.Of(err) == errclass.Throttled || ctx.Err() != nil {
					break zones
				}
				// Later steps of this zone depend on this one (markers
				// before records, old type before new): stop the zone.
				written = written[:len(written)-1]
				continue zones
			}
		}
	}
	if worstIsNotThrottled(errs) {
		if err := r.takeOver(ctx, fences, token, &rep, emit); err != nil {
			fail(err)
		}
	}
	unconfirmed := false
	if r.readBackOn && len(written) > 0 && ctx.Err() == nil && worstIsNotThrottled(errs) {
		zc := written[r.turn%len(written)]
		r.turn++
		evs, err := r.readBack(ctx, zc.Zone, verifiable(zc))
		if err != nil {
			fail(err)
		}
		for _, e := range evs {
			unconfirmed = true
			r.log.Warn("record: read back differs from what was written", "err", e.Err, "conflict", e.Conflict)
			emit(e)
			if e.Conflict {
				fail(e.Err)
			}
		}
	}
	rep.Pending = r.finish(gen, errs, rep.Writes, unconfirmed, emit)
	return rep, errs
}

// worstIsNotThrottled reports whether no error of errs asks to slow down.
func worstIsNotThrottled(errs []error) bool { return worst(errs) != errclass.Throttled }

// forgetMatched drops the read-back state of sets in zones read this
// reconcile that the plan leaves alone: they hold what is desired (or are
// no longer desired), so any earlier difference is over.
func (r *Reconciler) forgetMatched(ch Changes, idx map[string]*zoneIndex) {
	if len(r.mismatch) == 0 {
		return
	}
	planned := map[Key]bool{}
	for _, zc := range ch.Zones {
		for _, c := range zc.Changes {
			planned[c.Key] = true
		}
	}
	for k := range r.mismatch {
		if _, read := idx[k.Zone]; read && !planned[k] {
			delete(r.mismatch, k)
		}
	}
}

// Conflicts returns what the last reconcile refused, by name: names held
// by another owner or by records without a marker (ErrNotOwned), refused
// type switches (ErrTypeSwitch), empty sets with nothing published
// (ErrEmptySet), and sets held back because a set they need could not be
// published or written (ErrDependency), and sets the provider keeps
// different from what was written, Options.ConflictAfter applies in a row
// (ErrReadBack, a *ReadBackError naming the provider, the set and both
// values), so a caller can report them (a /readyz endpoint, a status
// page). Zones the last reconcile could not read are not covered. Empty
// before the first reconcile and when nothing was refused. Safe for
// concurrent use.
func (r *Reconciler) Conflicts() []Refusal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.conflicts)
}

// zoneOrder returns the zones with the ones whose names other zones' sets
// need first, so a failed write holds back its dependents in later zones.
func zoneOrder(zs []ZoneChanges) []ZoneChanges {
	needed := map[string]bool{}
	for _, zc := range zs {
		for _, c := range zc.Changes {
			for _, k := range c.Needs {
				if k.Zone != zc.Zone {
					needed[k.Zone] = true
				}
			}
		}
	}
	if len(needed) == 0 {
		return zs
	}
	out := make([]ZoneChanges, 0, len(zs))
	for _, first := range []bool{true, false} {
		for _, zc := range zs {
			if needed[zc.Zone] == first {
				out = append(out, zc)
			}
		}
	}
	return out
}

// dropFailedDeps removes from zc the creates and updates that need a name
// whose write failed, reporting each through hold.
func dropFailedDeps(zc ZoneChanges, failed map[Name]error, hold func(Change, Key, error)) ZoneChanges {
	if len(failed) == 0 {
		return zc
	}
	var keep []Change
	for _, c := range zc.Changes {
		i := slices.IndexFunc(c.Needs, func(k Key) bool { _, bad := failed[k.Node()]; return bad })
		if i >= 0 {
			hold(c, c.Needs[i], failed[c.Needs[i].Node()])
			continue
		}
		keep = append(keep, c)
	}
	zc.Changes = keep
	return zc
}

// zoneDependency returns the first dependency of c that changes in the same
// zone (c is then set by the Dependents step).
func zoneDependency(zc ZoneChanges, c Change) (Key, bool) {
	if c.Op != OpCreate && c.Op != OpUpdate {
		return Key{}, false
	}
	for _, k := range c.Needs {
		if k.Zone != zc.Zone {
			continue
		}
		for _, o := range zc.Changes {
			if (o.Op == OpCreate || o.Op == OpUpdate) && o.Key.Node() == k.Node() {
				return k, true
			}
		}
	}
	return Key{}, false
}

// write makes one provider call; with a fence, one fenced call whose
// success moves the fence to this writer's token.
func (r *Reconciler) write(ctx context.Context, zone string, st Step, f *zoneFence) error {
	var err error
	switch {
	case f != nil:
		r.fenceMu.Lock()
		defer r.fenceMu.Unlock()
		if last, ok := r.fenceLast[zone]; ok && last.token == f.token && (!f.own || last.seq > f.seq) {
			*f = last // a sibling writer moved the fence after f was read
		}
		delete(r.fenceLast, zone) // known again after a success
		for try := 0; ; try++ {
			err = r.fencer.ReplaceFenced(ctx, zone, f.was, f.now, st.Delete, st.Set)
			if err == nil {
				f.wrote()
				if r.fenceLast == nil {
					r.fenceLast = map[string]zoneFence{}
				}
				r.fenceLast[zone] = *f
				return nil
			}
			if !fencedErr(err) {
				break
			}
			// Refused: fenced off, or the fence moved under a writer with
			// the same token (then once more, with the fence just read).
			err = r.refused(ctx, zone, f, &WriteError{Zone: zone, Op: st.Kind, Records: len(st.Set) + len(st.Delete), Err: err})
			if try > 0 || !errors.Is(err, errFenceMoved) {
				return err
			}
		}
	case st.Kind == StepSet:
		_, err = r.p.SetRecords(ctx, zone, st.Set)
	case st.Kind == StepDelete:
		_, err = r.p.DeleteRecords(ctx, zone, st.Delete)
	case st.Kind == StepReplace:
		err = r.atomic.ReplaceRecords(ctx, zone, st.Delete, st.Set)
	}
	if err != nil {
		return &WriteError{Zone: zone, Op: st.Kind, Records: len(st.Set) + len(st.Delete), Err: err}
	}
	return nil
}

// finish records whether generation gen is applied and reports Pending.
// unconfirmed is true when a read-back differed from what was written: the
// generation is not applied yet.
func (r *Reconciler) finish(gen uint64, errs []error, writes int, unconfirmed bool, emit func(Event)) bool {
	r.mu.Lock()
	if len(errs) == 0 && !unconfirmed && r.done < gen && !r.cfg.DryRun {
		r.done = gen
	}
	pending := r.done != r.gen
	r.mu.Unlock()
	if len(errs) == 0 && !unconfirmed && !r.cfg.DryRun {
		emit(AppliedEvent{At: time.Now(), Writes: writes})
	}
	return pending
}

// trackHeld updates the held-since times and returns the held events.
// Keys of zones that could not be read (not in planned) keep their times.
func (r *Reconciler) trackHeld(now time.Time, held []Held, planned map[string]*zoneIndex) []HeldStale {
	keep := make(map[Key]bool, len(held))
	out := make([]HeldStale, 0, len(held))
	for _, h := range held {
		since, ok := r.held[h.Key]
		if !ok {
			since = now
			r.held[h.Key] = now
		}
		keep[h.Key] = true
		out = append(out, HeldStale{At: now, Key: h.Key, Since: since, Published: h.Published})
	}
	for k := range r.held {
		if _, read := planned[k.Zone]; read && !keep[k] {
			delete(r.held, k)
		}
	}
	return out
}

func (r *Reconciler) printPlan(ch Changes) {
	if r.out != nil {
		fmt.Fprintf(r.out, "dry run, not applied:\n%s", ch)
		return
	}
	r.log.Info("record: dry run, not applied", "plan", ch.String())
}

func (r *Reconciler) emit(e Event) {
	if r.obs != nil {
		r.obs.Observe(e)
	}
}

func switchKeys(zc ZoneChanges) []Key {
	var ks []Key
	for _, c := range zc.Changes {
		if c.Switch {
			ks = append(ks, c.Key)
		}
	}
	return ks
}

// ownValues copies the values of normalised sets, which may share the
// caller's slices, into one array the reconciler owns.
func ownValues(zones map[string]*zoneDesired) {
	n := 0
	for _, zd := range zones {
		for _, s := range zd.sets {
			n += len(s.Values)
		}
	}
	arena := make([]string, 0, n)
	for _, zd := range zones {
		for i := range zd.sets {
			v := zd.sets[i].Values
			lo := len(arena)
			arena = append(arena, v...)
			zd.sets[i].Values = arena[lo:len(arena):len(arena)]
		}
	}
}
