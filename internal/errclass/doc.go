// Package errclass judges errors by behaviour: an error that means "slow
// down" has a method Throttled() bool, one that may pass on retry has
// Temporary() bool (the way net.Error has Timeout()). Packages test for those
// methods through errors.As against local interfaces, so any libdns provider,
// ours or a user's, can take part without importing anything of ours.
//
// Of also classifies plain errors that say nothing about themselves: context
// deadlines, net.Error timeouts, connection refused/reset, and errors that
// carry an HTTP status code (429 is throttling, 5xx is transient).
package errclass
