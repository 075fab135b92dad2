package record

import (
	"context"
	"errors"

	"github.com/libdns/libdns"
)

// FencedStore gets and sets records through a Reconciler's ZoneEditor,
// its writes fenced with the Reconciler's token: the store of other
// writers of the same leader, such as a heartbeat.Publisher (it satisfies
// heartbeat.Store), so that a deposed leader's late beat is refused like
// its late records. Make one with Reconciler.FencedStore. Without a
// fencing token its SetRecords is the ZoneEditor's. With one, SetRecords
// is one ReplaceFenced call that sets the records and moves the zone's
// fence on (the fence and its last written value are shared with the
// Reconciler, whose fenced writes and the store's take turns, so neither
// expects a value the other has moved on; the zone is read when the value
// is unknown or a write was refused, then the write tried once more if
// the fence still holds the token); a fence holding a newer token fences the Reconciler off
// too (a *FencedError, a FencedEvent) and every later SetRecords fails at
// once, without I/O, until a higher token. Safe for concurrent use.
type FencedStore struct {
	r *Reconciler
}

// FencedStore returns a store whose writes are fenced with r's token.
func (r *Reconciler) FencedStore() *FencedStore {
	return &FencedStore{r: r}
}

// GetRecords reads the zone through the Reconciler's ZoneEditor.
func (s *FencedStore) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	return s.r.p.GetRecords(ctx, zone)
}

// SetRecords sets recs (libdns SetRecords semantics) in one fenced write,
// and returns them.
func (s *FencedStore) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	r := s.r
	r.mu.Lock()
	token, fencedAt, fenced := r.token, r.fencedAt, r.fenced
	r.mu.Unlock()
	if token == 0 {
		return r.p.SetRecords(ctx, zone, recs)
	}
	if fencedAt == token {
		return nil, fenced
	}
	zn := zoneOf(zone)
	r.fenceMu.Lock()
	f, known := r.fenceLast[zn]
	r.fenceMu.Unlock()
	if !known || f.token != token {
		got, err := r.p.GetRecords(ctx, zn)
		if err != nil {
			return nil, &ReadError{Zone: zn, Err: err}
		}
		if f = r.readFence(indexZone(zn, got, r.cfg.MarkerPrefix), token); f.newer {
			return nil, s.fenceOff(&FencedError{Zone: zn, Token: token, Holder: f.was.Text})
		}
	}
	err := r.write(ctx, zn, Step{Kind: StepSet, Set: recs}, &f)
	if ferr, ok := errors.AsType[*FencedError](err); ok {
		return nil, s.fenceOff(ferr)
	}
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// fenceOff fences the Reconciler off and reports it to its observer.
func (s *FencedStore) fenceOff(err *FencedError) error {
	var evs []Event
	s.r.fenceOff(err, func(e Event) { evs = append(evs, e) })
	for _, e := range evs {
		s.r.emit(e)
	}
	return err
}
