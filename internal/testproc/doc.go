// Package testproc holds what the tests that run real servers (named,
// knotd) as child processes share: a port free for UDP and TCP alike, a
// buffer the child's output goroutines can write to, and a child process
// that is stopped politely, then killed.
package testproc
