package record

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/errclass"
)

// DefaultFenceName is the relative name of the fence record in each zone a
// fenced Reconciler writes (Options.FenceToken): "_gslb-fence.example.com."
// for the zone "example.com.".
const DefaultFenceName = "_gslb-fence"

// Fencer is an optional capability of a ZoneEditor: a write that the store
// itself applies only while a fence record holds an expected value. A
// Reconciler given a fencing token (Options.FenceToken) writes through it
// and nothing else, so a deposed writer holding an older token is refused
// by the store, not by its own check. provider/memory (a compare-and-set
// under its write lock), provider/rfc2136 (an RFC 2136 prerequisite) and
// provider/route53 (a DELETE of the old fence in the change batch)
// implement it; plain libdns providers do not, and a Reconciler refuses a
// fencing token with them (ErrCannotFence) rather than pretend.
//
// ReplaceFenced applies, as one atomic change of zone, the deletion of del
// (records exactly as GetRecords returned them), the records of set (with
// libdns SetRecords semantics: each RRset named is replaced) and the
// replacement of the fence — the TXT RRset at was.Name, relative to zone —
// by the single record now (same name) — but only if, when the store
// applies it, that TXT RRset holds exactly the one text was.Text (was.Text
// empty: no TXT RRset at the name). was.TTL is the fence's TTL as read
// (stores that match an RRset whole, TTL included, need it). When the
// condition does not hold it changes nothing and returns an error with,
// somewhere in its chain, a method Fenced() bool that returns true; other
// failures return errors judged as usual (Throttled, Temporary). del and
// set may be empty (a fence-only write). It must be safe for concurrent
// use and honour context cancellation.
type Fencer interface {
	ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error
}

// ErrFenced marks a write refused because the zone's fence record holds a
// newer fencing token than the Reconciler's (or another owner's fence): a
// newer writer has taken over. A Reconciler that meets it stops writing,
// in every zone, and does not retry (its reconciles return a *FencedError
// at once, reading nothing) until SetFenceToken gives it a higher token.
var ErrFenced = errors.New("record: fenced: a newer writer holds the zone")

// ErrCannotFence is wrapped by the error New and SetFenceToken return for
// a fencing token with a ZoneEditor that is not a Fencer (a plain libdns
// provider cannot make a write conditional), together with ErrInvalid.
var ErrCannotFence = errors.New("record: the provider cannot fence writes")

// FencedError reports a refused, fenced write or a fence read holding a
// newer token. It unwraps to ErrFenced and to the store's refusal, if any.
type FencedError struct {
	// Zone is the zone whose fence refused the writer.
	Zone string
	// Token is the Reconciler's fencing token.
	Token uint64
	// Holder is the fence's value as last read ("<ownerId> <token>"), empty
	// when the store refused a write without it being read.
	Holder string
	// Err is the store's refusal (its chain answers Fenced() true); nil
	// when the fence was read holding a newer token and nothing was sent.
	Err error
}

// Error names the zone, the token and the fence's holder.
func (e *FencedError) Error() string {
	s := fmt.Sprintf("record: fenced in zone %s: token %d is not the zone's newest", e.Zone, e.Token)
	if e.Holder != "" {
		s += fmt.Sprintf(" (fence holds %q)", e.Holder)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrFenced and the store's refusal.
func (e *FencedError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrFenced}
	}
	return []error{ErrFenced, e.Err}
}

// Temporary is false: waiting does not lift a fence.
func (e *FencedError) Temporary() bool { return false }

// Throttled is false.
func (e *FencedError) Throttled() bool { return false }

// FencedEvent reports that the Reconciler was fenced off: a store refused
// its write, or a zone's fence holds a newer token. It stops writing until
// SetFenceToken gives it a higher token. It is reported once per token.
type FencedEvent struct {
	// At is when the fence was met.
	At time.Time
	// Err is the *FencedError.
	Err *FencedError
}

// When returns At.
func (e FencedEvent) When() time.Time { return e.At }

// SetFenceToken gives the Reconciler a new fencing token, e.g. when its
// process becomes leader again. A token lower than the current one is
// refused (tokens only grow); the same token changes nothing; a higher one
// lifts a fence met with the older token and wakes Run: the next
// reconcile takes the zones over (a compare-and-set of each zone's fence
// from the value it read). A token with a ZoneEditor that is not a Fencer is refused
// (ErrCannotFence). Safe for concurrent use.
func (r *Reconciler) SetFenceToken(token uint64) error {
	if r.p == nil {
		return ErrNotConfigured
	}
	if token > 0 && r.fencer == nil {
		return cannotFence(token, r.p)
	}
	r.mu.Lock()
	if token < r.token {
		cur := r.token
		r.mu.Unlock()
		return fmt.Errorf("%w: fence token %d is lower than the current %d (tokens only grow)", ErrInvalid, token, cur)
	}
	raised := token > r.token
	r.token = token
	r.mu.Unlock()
	if raised {
		select { // Run takes over at once
		case r.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// FenceToken returns the current fencing token (0: no fencing) and whether
// the Reconciler is fenced off with it.
func (r *Reconciler) FenceToken() (token uint64, fenced bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.token, r.token > 0 && r.fencedAt == r.token
}

func cannotFence(token uint64, p ZoneEditor) error {
	return fmt.Errorf("%w: %w: Options.FenceToken = %d: %T does not implement record.Fencer; use 0 (no fencing) or a store that fences (provider/memory, provider/rfc2136, provider/route53)",
		ErrInvalid, ErrCannotFence, token, p)
}

// fenceValue is the text of a fence record: "<ownerId> <token> <seq>",
// seq counting the writes made with the token, so that every fenced write
// changes the fence (and a DELETE of the old value names one write).
func fenceValue(owner string, token, seq uint64) string {
	return owner + " " + strconv.FormatUint(token, 10) + " " + strconv.FormatUint(seq, 10)
}

// parseFence splits a fence's text; ok is false for text not written by a
// Reconciler.
func parseFence(text string) (owner string, token, seq uint64, ok bool) {
	f := strings.Split(text, " ")
	if len(f) != 3 || f[0] == "" {
		return "", 0, 0, false
	}
	t, err1 := strconv.ParseUint(f[1], 10, 64)
	n, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return f[0], t, n, true
}

// zoneFence is a zone's fence as read and what this writer makes of it.
type zoneFence struct {
	token, seq uint64
	// was is the fence as last read or written; now what the next write
	// makes it (the token, and one more write).
	was, now libdns.TXT
	// newer is set when the fence refuses this writer (a newer token, or
	// another owner's, or several values): nothing is written.
	newer bool
	// own is true when was already holds this writer's token.
	own bool
}

// wrote moves the fence on after a successful write.
func (f *zoneFence) wrote() {
	f.was, f.own = f.now, true
	f.seq++
	owner, _, _, _ := parseFence(f.now.Text)
	f.now.Text = fenceValue(owner, f.token, f.seq)
}

// readFence finds the fence of a zone in its index and decides.
func (r *Reconciler) readFence(idx *zoneIndex, token uint64) zoneFence {
	name := r.cfg.FenceName
	f := zoneFence{
		token: token,
		was:   libdns.TXT{Name: name},
		now:   libdns.TXT{Name: name, TTL: r.cfg.MarkerTTL, Text: fenceValue(r.cfg.OwnerID, token, 0)},
	}
	cs := idx.get(idx.lookup(name), "TXT")
	if cs == nil {
		return f
	}
	vals := idx.values(cs)
	f.was.TTL = cs.ttl
	f.was.Text = strings.Join(vals, " | ")
	if len(vals) != 1 || cs.nrec != 1 {
		f.newer = true
		return f
	}
	f.was.Text = vals[0]
	owner, held, seq, ok := parseFence(vals[0])
	switch {
	case !ok || owner != r.cfg.OwnerID || held > token:
		f.newer = true
	case held == token:
		f.own, f.seq = true, seq+1
		f.now.Text = fenceValue(r.cfg.OwnerID, token, f.seq)
	}
	return f
}

// fencedErr reports whether err is a store's refusal of a fenced write.
func fencedErr(err error) bool {
	var f interface{ Fenced() bool }
	return errors.As(err, &f) && f.Fenced()
}

// fenceOff stops the writes with the current token and reports it once.
func (r *Reconciler) fenceOff(err *FencedError, emit func(Event)) {
	r.mu.Lock()
	first := r.fencedAt != err.Token
	if r.token == err.Token {
		r.fencedAt, r.fenced = err.Token, err
	}
	r.mu.Unlock()
	if first {
		r.log.Warn("record: fenced off; writes stop until a higher fencing token", "err", err)
		emit(FencedEvent{At: time.Now(), Err: err})
	}
}

// takeOver writes the fence of every zone read whose fence does not hold
// this writer's token yet and that no change of the plan wrote: a new
// writer fences off the older ones at once, even with nothing to change.
func (r *Reconciler) takeOver(ctx context.Context, fences map[string]*zoneFence, token uint64, rep *Report, emit func(Event)) error {
	if len(fences) == 0 {
		return nil
	}
	r.mu.Lock()
	off := r.fencedAt == token
	r.mu.Unlock()
	if off || ctx.Err() != nil {
		return nil
	}
	var errs []error
	for _, zn := range slices.Sorted(maps.Keys(fences)) {
		f := fences[zn]
		if f.own {
			continue
		}
		if err := r.lim.Wait(ctx); err != nil {
			return errors.Join(append(errs, fmt.Errorf("record: waiting for the write limiter: %w", err))...)
		}
		err := r.write(ctx, zn, Step{Kind: StepSet}, f)
		rep.Writes++
		emit(WriteEvent{At: time.Now(), Zone: zn, Kind: StepSet, Records: 1, Err: err})
		if ferr, ok := errors.AsType[*FencedError](err); ok {
			r.fenceOff(ferr, emit)
			return errors.Join(append(errs, err)...)
		}
		if err != nil {
			errs = append(errs, err)
			if errclass.Of(err) == errclass.Throttled {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// errFenceMoved is the class of a fenced write refused because a writer
// with the same token (a sibling in the same process, such as a
// FencedStore) moved the fence since it was read: retried, not fenced.
var errFenceMoved = errors.New("record: the fence moved under a writer with the same token; will retry")

// refused judges a store's refusal of a fenced write: it reads the zone's
// fence again and returns a *FencedError when a newer token (or another
// owner) holds it, and else a transient error (the write tries once more
// with the fence read anew, then Run retries). The zone's fence f is updated to what was read.
func (r *Reconciler) refused(ctx context.Context, zone string, f *zoneFence, werr *WriteError) error {
	if err := r.lim.Wait(ctx); err != nil {
		return errors.Join(werr, err)
	}
	recs, err := r.p.GetRecords(ctx, zone)
	if err != nil {
		return errors.Join(werr, &ReadError{Zone: zone, Err: err})
	}
	nf := r.readFence(indexZone(zone, recs, r.cfg.MarkerPrefix), f.token)
	*f = nf
	if nf.newer {
		return &FencedError{Zone: zone, Token: f.token, Holder: nf.was.Text, Err: werr}
	}
	return errclass.Mark(fmt.Errorf("%w: %w", errFenceMoved, werr), errclass.Transient)
}
