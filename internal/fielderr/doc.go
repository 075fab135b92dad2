// Package fielderr is the one shape of an invalid-configuration error in
// gslbkit. Every config's Validate, in every package, reports a bad value as
// an *Error whose message reads
//
//	<package>: invalid <config>: <path> = <value>: allowed <what>
//
// for example
//
//	probe: invalid policy: interval = -1s: allowed [1ms, 5m]
//	health: invalid panic: threshold = -5: allowed [0, 100]
//	provider: invalid retry config: maxAttempts = 0: allowed [1, 20]
//
// The prefix is the text of the package's sentinel (probe.ErrInvalidPolicy
// reads "probe: invalid policy"), which the error wraps, so errors.Is works
// against it; each package exports the type under its own name (type
// FieldError = fielderr.Error) so errors.As works from there. The path is
// the field's JSON name, dotted into nested configs, with list elements as
// [i] or ["name"]; the value is formatted as it would be written (strings
// quoted, durations as "1m30s" without trailing zero units); ranges are
// inclusive and written [lo, hi], and one-sided bounds as >= lo or <= hi.
// A config nested in another is re-rooted with In, so the message carries
// one prefix, the outermost package's, and the full path.
package fielderr
