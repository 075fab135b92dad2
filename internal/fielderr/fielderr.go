package fielderr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Error is an invalid value in a configuration: where it is, what it was,
// and what is allowed. It wraps the sentinel of the config that holds the
// field (Err).
type Error struct {
	// Path is the field's path in JSON names from the validated config:
	// "interval", "tls.certFile", "targets[2].policy.timeout",
	// `zones["example.com."].ttl`.
	Path string
	// Value is the value as written: strings quoted, durations short
	// ("1m30s", "-1s"), numbers plain. Empty when the problem is the
	// absence of a value.
	Value string
	// Allowed says what the field may hold: a range ("[1, 65536]",
	// "[1s, 5m]", ">= 0"), a set (`one of "http", "tcp"`) or a rule ("a
	// fully qualified DNS name", "set together with keyFile").
	Allowed string
	// Err is the sentinel of the config the field belongs to; its text is
	// the message's prefix.
	Err error
}

// Error formats the error as
// "<sentinel>: <path> = <value>: allowed <allowed>".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("invalid config")
	}
	b.WriteString(": ")
	b.WriteString(e.Path)
	if e.Value != "" {
		b.WriteString(" = ")
		b.WriteString(e.Value)
	}
	if e.Allowed != "" {
		b.WriteString(": allowed ")
		b.WriteString(e.Allowed)
	}
	return b.String()
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error for the field at path holding value, formatted by
// Value.
func New(sentinel error, path string, value any, allowed string) *Error {
	return &Error{Path: path, Value: Value(value), Allowed: allowed, Err: sentinel}
}

// Missing returns an *Error for a required field left empty.
func Missing(sentinel error, path, allowed string) *Error {
	return &Error{Path: path, Value: `""`, Allowed: allowed, Err: sentinel}
}

// Hidden returns an *Error for a field whose value is never shown (a
// token, a secret): its value reads (set).
func Hidden(sentinel error, path, allowed string) *Error {
	return &Error{Path: path, Value: "(set)", Allowed: allowed, Err: sentinel}
}

// Together checks two fields that are set together or not at all: when
// only one of them is set, it returns a Missing error for the other,
// allowed "set together with <the set one> (or both empty <bothEmpty>)";
// otherwise nil.
func Together(sentinel error, a string, aSet bool, b string, bSet bool, bothEmpty string) error {
	switch {
	case aSet && !bSet:
		return Missing(sentinel, b, "set together with "+a+" (or both empty "+bothEmpty+")")
	case bSet && !aSet:
		return Missing(sentinel, a, "set together with "+b+" (or both empty "+bothEmpty+")")
	}
	return nil
}

// In re-roots err, when it is (or wraps) an *Error, under parent and makes
// it wrap sentinel, the enclosing config's: the nested config's prefix is
// replaced by the outer one and the path grows in front. A copy is
// returned; any other error, and nil, are returned unchanged.
func In(parent string, sentinel error, err error) error {
	if err == nil {
		return nil // before fe, which escapes: no allocation for nil
	}
	var fe *Error
	if !errors.As(err, &fe) {
		return err
	}
	c := *fe
	c.Err = sentinel
	c.Path = Join(parent, c.Path)
	return &c
}

// Join joins two path parts: a dot between names, nothing before an index.
func Join(parent, child string) string {
	switch {
	case parent == "":
		return child
	case child == "":
		return parent
	case child[0] == '[':
		return parent + child
	}
	return parent + "." + child
}

// Index returns the path of the i-th element of the list at path.
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Key returns the path of the element named key in the list or map at path.
func Key(path, key string) string { return path + "[" + strconv.Quote(key) + "]" }

// Value formats v as it would be written: strings quoted, durations short,
// everything else with %v.
func Value(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case time.Duration:
		return Duration(x)
	case fmt.Stringer:
		return x.String()
	case error:
		return strconv.Quote(x.Error())
	}
	return fmt.Sprint(v)
}

// Duration formats d as Go does but without trailing zero units: 5m, 1h30m,
// 1m30s, 250ms, -1s.
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Number is what Range and its siblings format.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~float32 | ~float64
}

// Range writes the inclusive range [lo, hi].
func Range[T Number](lo, hi T) string { return "[" + num(lo) + ", " + num(hi) + "]" }

// DurationRange writes the inclusive range [lo, hi] of durations.
func DurationRange(lo, hi time.Duration) string {
	return "[" + Duration(lo) + ", " + Duration(hi) + "]"
}

// AtLeast writes the one-sided bound >= lo.
func AtLeast[T Number](lo T) string { return ">= " + num(lo) }

// AtMost writes the one-sided bound <= hi.
func AtMost[T Number](hi T) string { return "<= " + num(hi) }

// DurationAtLeast writes the one-sided bound >= lo for a duration.
func DurationAtLeast(lo time.Duration) string { return ">= " + Duration(lo) }

// OneOf writes `one of "a", "b", "c"`.
func OneOf(values ...string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return "one of " + strings.Join(q, ", ")
}

// OrDefault writes allowed followed by ", or 0 for the default (def)", def
// formatted by Value: what a field whose zero value takes a default allows.
func OrDefault(allowed string, def any) string {
	return allowed + ", or 0 for the default (" + Value(def) + ")"
}

func num[T Number](v T) string { return fmt.Sprint(v) }

// Both returns a sentinel whose text is outer's and which matches both outer
// and inner with errors.Is: for a nested config whose errors should keep
// matching the inner config's sentinel once re-rooted with In under the
// outer one's prefix.
func Both(outer, inner error) error { return both{outer, inner} }

type both struct{ outer, inner error }

func (b both) Error() string   { return b.outer.Error() }
func (b both) Unwrap() []error { return []error{b.outer, b.inner} }
