// Package probecall holds what the probers of probe's subpackages
// (probe/dnsprobe, probe/grpcprobe) do around each probe alike. It builds
// on probe's Result, so it lives under probe/internal, importable by probe
// and its subpackages only: the module's top-level internal/ keeps its
// library helpers to the standard library.
package probecall
