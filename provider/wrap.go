package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/libdns/libdns"
)

// Provider is the set of libdns interfaces gslbkit reads and changes zones
// through, the way io.ReadWriter combines io.Reader and io.Writer. Every
// adapter in this tree, provider/memory and a Wrapped provider satisfy it.
// Implementations must be safe for concurrent use and honour ctx, as libdns
// requires.
type Provider interface {
	libdns.RecordGetter
	libdns.RecordAppender
	libdns.RecordSetter
	libdns.RecordDeleter
}

// Method names one libdns method a call passes through.
type Method string

// The methods a Wrapped provider forwards: the five libdns interfaces,
// and the two atomic writes record.Reconciler uses when a store has them
// (record.Replacer's ReplaceRecords, record.Fencer's ReplaceFenced).
const (
	MethodGetRecords     Method = "GetRecords"
	MethodAppendRecords  Method = "AppendRecords"
	MethodSetRecords     Method = "SetRecords"
	MethodDeleteRecords  Method = "DeleteRecords"
	MethodListZones      Method = "ListZones"
	MethodReplaceRecords Method = "ReplaceRecords"
	MethodReplaceFenced  Method = "ReplaceFenced"
)

// Methods lists every Method in a fixed order (reads first, then writes,
// then ListZones, then the atomic writes); handy for iterating over Stats.
var Methods = [...]Method{MethodGetRecords, MethodAppendRecords, MethodSetRecords, MethodDeleteRecords, MethodListZones, MethodReplaceRecords, MethodReplaceFenced}

// Writes reports whether m changes a zone (AppendRecords, SetRecords,
// DeleteRecords, ReplaceRecords, ReplaceFenced).
func (m Method) Writes() bool {
	switch m {
	case MethodAppendRecords, MethodSetRecords, MethodDeleteRecords, MethodReplaceRecords, MethodReplaceFenced:
		return true
	}
	return false
}

// Atomic reports whether m applies all its changes or none
// (ReplaceRecords, ReplaceFenced): a call of it is never applied in part.
func (m Method) Atomic() bool { return m == MethodReplaceRecords || m == MethodReplaceFenced }

// replacer and fencer are record.Replacer and record.Fencer, by their
// method sets (this package does not import record).
type replacer interface {
	ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error
}

type fencer interface {
	ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error
}

// ErrUnsupported is matched (errors.Is) by the error a Wrapped provider
// returns for a method the provider inside does not implement.
var ErrUnsupported = errors.New("provider: method not supported")

// ErrNotConfigured is returned by the methods of a zero value that needs its
// constructor (a RateLimit not made by NewRateLimit).
var ErrNotConfigured = errors.New("provider: not configured (use its constructor)")

// UnsupportedError names the method the wrapped provider lacks. It matches
// ErrUnsupported and is permanent (it answers neither Throttled nor
// Temporary), so retries stop at once.
type UnsupportedError struct {
	Method Method
	// Provider is the wrapped provider's Go type, for the message.
	Provider string
}

// Error says which method is missing on which provider type.
func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("provider: %s does not implement libdns %s", e.Provider, e.Method)
}

// Unwrap returns ErrUnsupported.
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// Call describes one call on its way through a Wrapped provider. Records
// is nil for GetRecords and ListZones; for ReplaceRecords and
// ReplaceFenced it holds the records set and Delete those deleted, and
// for ReplaceFenced Was and Now are the fence expected and its
// replacement. Interceptors must treat the slices as read-only (copy
// before changing them).
type Call struct {
	Method  Method
	Zone    string
	Records []libdns.Record
	Delete  []libdns.Record
	Was     libdns.TXT
	Now     libdns.TXT
}

// Result is what a call returned: Records for the record methods, Zones for
// ListZones.
type Result struct {
	Records []libdns.Record
	Zones   []libdns.Zone
}

// Invoker performs a call: the next interceptor in a chain, or the wrapped
// provider itself. It honours ctx and is safe for concurrent use.
type Invoker func(ctx context.Context, c Call) (Result, error)

// Interceptor sees every call made through a Wrapped provider and decides
// how to pass it on: wait first (rate limit), call next several times
// (retry), measure it (meter) or fail it (fault injection). Implementations
// must be safe for concurrent use, honour ctx, and may call next zero or
// more times.
type Interceptor interface {
	Intercept(ctx context.Context, c Call, next Invoker) (Result, error)
}

// InterceptorFunc adapts a function to Interceptor.
type InterceptorFunc func(ctx context.Context, c Call, next Invoker) (Result, error)

// Intercept calls f.
func (f InterceptorFunc) Intercept(ctx context.Context, c Call, next Invoker) (Result, error) {
	return f(ctx, c, next)
}

// Wrapped is a libdns provider seen through a chain of interceptors. It
// implements all five libdns interfaces (RecordGetter, RecordAppender,
// RecordSetter, RecordDeleter, ZoneLister) and record's atomic writes
// (ReplaceRecords, ReplaceFenced) whatever the provider inside
// implements: a method the inside provider lacks fails with an
// *UnsupportedError (matching ErrUnsupported) after passing through the
// interceptors, so meters count it and retries stop. Supports tells callers
// in advance, and Unwrap is how record.New judges the atomic writes by the
// provider inside: a Reconciler over a chain around a Route 53 or RFC 2136
// provider keeps its atomic type switches and its fencing. We chose
// "implement all, fail clearly" over generating a type per combination of
// interfaces so wrappers stack without losing methods.
//
// A Wrapped is safe for concurrent use when its provider and interceptors
// are. Its zero value is not usable; build one with Wrap.
type Wrapped struct {
	inner  libdns.RecordGetter
	invoke Invoker
}

// Wrap returns p seen through the interceptors, the first one outermost:
// Wrap(p, meter, retry, limit) meters each logical call, retries it, and
// rate-limits every attempt. Wrap starts nothing and does not call p.
func Wrap(p libdns.RecordGetter, interceptors ...Interceptor) *Wrapped {
	w := &Wrapped{inner: p}
	next := Invoker(w.direct)
	for i := len(interceptors) - 1; i >= 0; i-- {
		ic, n := interceptors[i], next
		if ic == nil {
			continue
		}
		next = func(ctx context.Context, c Call) (Result, error) { return ic.Intercept(ctx, c, n) }
	}
	w.invoke = next
	return w
}

// Unwrap returns the provider inside (nil for a nil or zero Wrapped).
func (w *Wrapped) Unwrap() libdns.RecordGetter {
	if w == nil {
		return nil
	}
	return w.inner
}

// Supports reports whether the provider inside implements m.
func (w *Wrapped) Supports(m Method) bool {
	if w == nil {
		return false
	}
	switch m {
	case MethodGetRecords:
		return w.inner != nil
	case MethodAppendRecords:
		_, ok := w.inner.(libdns.RecordAppender)
		return ok
	case MethodSetRecords:
		_, ok := w.inner.(libdns.RecordSetter)
		return ok
	case MethodDeleteRecords:
		_, ok := w.inner.(libdns.RecordDeleter)
		return ok
	case MethodListZones:
		_, ok := w.inner.(libdns.ZoneLister)
		return ok
	case MethodReplaceRecords:
		_, ok := w.inner.(replacer)
		return ok
	case MethodReplaceFenced:
		_, ok := w.inner.(fencer)
		return ok
	}
	return false
}

func (w *Wrapped) unsupported(m Method) error {
	if w == nil {
		return &UnsupportedError{Method: m, Provider: "<nil>"}
	}
	return &UnsupportedError{Method: m, Provider: fmt.Sprintf("%T", w.inner)}
}

// direct calls the provider inside; it is the end of every chain.
func (w *Wrapped) direct(ctx context.Context, c Call) (Result, error) {
	if !w.Supports(c.Method) {
		return Result{}, w.unsupported(c.Method)
	}
	var (
		r   Result
		err error
	)
	switch c.Method {
	case MethodGetRecords:
		r.Records, err = w.inner.GetRecords(ctx, c.Zone)
	case MethodAppendRecords:
		r.Records, err = w.inner.(libdns.RecordAppender).AppendRecords(ctx, c.Zone, c.Records)
	case MethodSetRecords:
		r.Records, err = w.inner.(libdns.RecordSetter).SetRecords(ctx, c.Zone, c.Records)
	case MethodDeleteRecords:
		r.Records, err = w.inner.(libdns.RecordDeleter).DeleteRecords(ctx, c.Zone, c.Records)
	case MethodListZones:
		r.Zones, err = w.inner.(libdns.ZoneLister).ListZones(ctx)
	case MethodReplaceRecords:
		err = w.inner.(replacer).ReplaceRecords(ctx, c.Zone, c.Delete, c.Records)
	case MethodReplaceFenced:
		err = w.inner.(fencer).ReplaceFenced(ctx, c.Zone, c.Was, c.Now, c.Delete, c.Records)
	}
	return r, err
}

// Invoke sends c through the chain; the typed methods below call it.
// A zero Wrapped wraps nothing: every call returns an *UnsupportedError.
func (w *Wrapped) Invoke(ctx context.Context, c Call) (Result, error) {
	if w == nil || w.invoke == nil {
		return w.direct(ctx, c)
	}
	return w.invoke(ctx, c)
}

// GetRecords implements libdns.RecordGetter through the chain.
func (w *Wrapped) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	r, err := w.Invoke(ctx, Call{Method: MethodGetRecords, Zone: zone})
	return r.Records, err
}

// AppendRecords implements libdns.RecordAppender through the chain.
func (w *Wrapped) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	r, err := w.Invoke(ctx, Call{Method: MethodAppendRecords, Zone: zone, Records: recs})
	return r.Records, err
}

// SetRecords implements libdns.RecordSetter through the chain.
func (w *Wrapped) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	r, err := w.Invoke(ctx, Call{Method: MethodSetRecords, Zone: zone, Records: recs})
	return r.Records, err
}

// DeleteRecords implements libdns.RecordDeleter through the chain.
func (w *Wrapped) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	r, err := w.Invoke(ctx, Call{Method: MethodDeleteRecords, Zone: zone, Records: recs})
	return r.Records, err
}

// ListZones implements libdns.ZoneLister through the chain.
func (w *Wrapped) ListZones(ctx context.Context) ([]libdns.Zone, error) {
	r, err := w.Invoke(ctx, Call{Method: MethodListZones})
	return r.Zones, err
}

// ReplaceRecords deletes del and sets set in one call of the provider
// inside (record.Replacer), through the chain.
func (w *Wrapped) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	_, err := w.Invoke(ctx, Call{Method: MethodReplaceRecords, Zone: zone, Records: set, Delete: del})
	return err
}

// ReplaceFenced is the provider inside's fenced write (record.Fencer),
// through the chain. A retried attempt after one that landed finds the
// fence moved and is refused as fenced; record.Reconciler reads the fence
// again and tells its own write from a newer writer's.
func (w *Wrapped) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	_, err := w.Invoke(ctx, Call{Method: MethodReplaceFenced, Zone: zone, Records: set, Delete: del, Was: was, Now: now})
	return err
}

var (
	_ replacer              = (*Wrapped)(nil)
	_ fencer                = (*Wrapped)(nil)
	_ libdns.RecordGetter   = (*Wrapped)(nil)
	_ libdns.RecordAppender = (*Wrapped)(nil)
	_ libdns.RecordSetter   = (*Wrapped)(nil)
	_ libdns.RecordDeleter  = (*Wrapped)(nil)
	_ libdns.ZoneLister     = (*Wrapped)(nil)
)
