//go:build !unix

package main

// fileLimit reports no descriptor limit where the system has none to read.
func fileLimit() (uint64, bool) { return 0, false }
