// Package backoff computes retry delays: capped exponential back-off with
// optional jitter, and the interval jitter probes use so they do not
// synchronise. Everything here is a pure function of its inputs; randomness
// comes from a caller-supplied source so tests stay deterministic.
package backoff
