package main

import (
	"context"
	"errors"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/record"
)

// fencedStore is a replica's store (its region's view) as the term's
// record.Reconciler writes it: the library's fencing makes every write
// conditional on the zone's fence record (record.Options.FenceToken,
// compared by the store through record.Fencer), and fencedStore counts the
// writes the store refuses. Its hooks let tests freeze a replica in the
// middle of a write.
type fencedStore struct {
	next *view
	// before runs before every write with the write's records, and after
	// with its outcome; tests use them to freeze a replica in the middle
	// of its write path. before returning true means the write was
	// already on its way when the process froze: its context can no
	// longer stop it.
	before func(zone string, recs []libdns.Record) bool
	after  func(zone string, recs []libdns.Record, err error)
	// refused counts the writes the store refused as fenced.
	refused func()
}

var _ record.Fencer = (*fencedStore)(nil)

// Unwrap returns the view, whose stores record.New checks for the fenced
// write.
func (f *fencedStore) Unwrap() libdns.RecordGetter { return f.next }

// GetRecords implements libdns.RecordGetter.
func (f *fencedStore) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	return f.next.GetRecords(ctx, zone)
}

// SetRecords implements libdns.RecordSetter (the reconciler writes
// through ReplaceFenced while it has a token).
func (f *fencedStore) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	var out []libdns.Record
	err := f.write(ctx, zone, recs, func(ctx context.Context) (err error) {
		out, err = f.next.SetRecords(ctx, zone, recs)
		return err
	})
	return out, err
}

// DeleteRecords implements libdns.RecordDeleter.
func (f *fencedStore) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	var out []libdns.Record
	err := f.write(ctx, zone, recs, func(ctx context.Context) (err error) {
		out, err = f.next.DeleteRecords(ctx, zone, recs)
		return err
	})
	return out, err
}

// ReplaceFenced implements record.Fencer: the reconciler's fenced write,
// which the store refuses when the zone's fence is not the one this
// writer last saw.
func (f *fencedStore) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	all := append(append([]libdns.Record(nil), del...), set...)
	return f.write(ctx, zone, all, func(ctx context.Context) error {
		err := f.next.ReplaceFenced(ctx, zone, was, now, del, set)
		var fenced interface{ Fenced() bool }
		if err != nil && f.refused != nil && (errors.Is(err, record.ErrFenced) || errors.As(err, &fenced) && fenced.Fenced()) {
			f.refused()
		}
		return err
	})
}

func (f *fencedStore) write(ctx context.Context, zone string, recs []libdns.Record, do func(context.Context) error) error {
	if f.before != nil && f.before(zone, recs) {
		ctx = context.WithoutCancel(ctx)
	}
	err := do(ctx)
	if f.after != nil {
		f.after(zone, recs, err)
	}
	return err
}
