package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/record"
)

// fencer carries a leader's fencing token into every write it makes. It is
// this program's seam for the library's fencing: a deposed leader's late
// write must be refused by the store, since a lease alone cannot stop a
// process that was paused between checking its lease and writing.
type fencer interface {
	// SetFencingToken sets the token of the following writes; 0 means
	// "not leading": every write is refused.
	SetFencingToken(token uint64)
}

// fenceBook is the compare-and-set behind fencedStore: per cluster, the
// highest token that has written. A write with a lower token is refused;
// a write with a higher one raises it. One book serves every replica that
// writes the same embedded zones in one process; the check and the write
// happen under one lock, so no write with an older token lands after a
// newer one.
type fenceBook struct {
	mu   sync.Mutex
	high map[string]uint64
}

func newFenceBook() *fenceBook { return &fenceBook{high: map[string]uint64{}} }

// fencedStore is one replica's store: every write carries its token and
// goes through the book. A nil book fences nothing (the store as it is).
type fencedStore struct {
	next    store
	book    *fenceBook
	cluster string
	token   atomic.Uint64
	// before runs before every write (outside the lock) with the write's
	// records, and after with its outcome; tests use them to freeze a
	// replica in the middle of its write path. before returning true
	// means the write was already on its way when the process froze: its
	// context can no longer stop it.
	before func(zone string, recs []libdns.Record) bool
	after  func(zone string, recs []libdns.Record, err error)
	// refused counts the writes the book refused.
	refused func()
}

var _ fencer = (*fencedStore)(nil)

// SetFencingToken implements fencer.
func (f *fencedStore) SetFencingToken(token uint64) { f.token.Store(token) }

// GetRecords implements libdns.RecordGetter; reads are not fenced.
func (f *fencedStore) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	return f.next.GetRecords(ctx, zone)
}

// SetRecords implements libdns.RecordSetter, conditionally on the token.
func (f *fencedStore) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	var out []libdns.Record
	err := f.write(ctx, zone, recs, func(ctx context.Context) (err error) {
		out, err = f.next.SetRecords(ctx, zone, recs)
		return err
	})
	return out, err
}

// DeleteRecords implements libdns.RecordDeleter, conditionally on the token.
func (f *fencedStore) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	var out []libdns.Record
	err := f.write(ctx, zone, recs, func(ctx context.Context) (err error) {
		out, err = f.next.DeleteRecords(ctx, zone, recs)
		return err
	})
	return out, err
}

// ReplaceFenced implements record.Fencer: the reconciler's fenced write
// (the library's fencing: the store compares the zone's fence record),
// through the test hooks.
func (f *fencedStore) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	all := append(append([]libdns.Record(nil), del...), set...)
	if f.before != nil && f.before(zone, all) {
		ctx = context.WithoutCancel(ctx)
	}
	err := f.next.(*view).ReplaceFenced(ctx, zone, was, now, del, set)
	var fenced interface{ Fenced() bool }
	if err != nil && f.refused != nil && (errors.Is(err, record.ErrFenced) || errors.As(err, &fenced) && fenced.Fenced()) {
		f.refused()
	}
	if f.after != nil {
		f.after(zone, all, err)
	}
	return err
}

func (f *fencedStore) write(ctx context.Context, zone string, recs []libdns.Record, do func(context.Context) error) error {
	token := f.token.Load() // taken when the write is issued
	if f.before != nil && f.before(zone, recs) {
		ctx = context.WithoutCancel(ctx)
	}
	err := f.cas(token, func() error { return do(ctx) })
	if f.after != nil {
		f.after(zone, recs, err)
	}
	return err
}

// cas runs do if token is at least the highest token of the cluster, and
// raises it to token; otherwise it refuses the write.
func (f *fencedStore) cas(token uint64, do func() error) error {
	if token == 0 {
		return errFenced
	}
	if f.book == nil {
		return do()
	}
	f.book.mu.Lock()
	defer f.book.mu.Unlock()
	if token < f.book.high[f.cluster] {
		if f.refused != nil {
			f.refused()
		}
		return errFenced
	}
	f.book.high[f.cluster] = token
	return do()
}
