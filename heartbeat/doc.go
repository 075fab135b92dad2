// Package heartbeat shares cluster liveness through DNS TXT records, the
// way the heartbeat controller does: every cluster's controller writes a
// small timestamped beat at health-001-<cluster>.<zone> while its own
// gateways are healthy, and every controller reads the others' beats to
// decide which clusters, and so which regions, are alive.
//
// A Beat is one TXT string of at most 255 bytes (format version, cluster,
// region, timestamp, optional gateway summary and self-heal flag), optionally
// signed with HMAC-SHA256 by a Keyring whose key id travels in the beat.
// Version 1 (v=gslb1) is written by default; version 2 (Config.BeatVersion)
// adds the healthy-of-total gateway summary, after every reader is upgraded.
// ParseBeat and Keyring.Open never trust their input. The rules are pure
// functions of a timestamp and now: freshness (HealthyDuration plus
// SkewTolerance), beats dated too far ahead, and the Healer's self-heal beat
// that keeps a write throttle from making peers see this cluster stale.
//
// The Publisher is the thin loop around those rules (writes through any
// libdns RecordSetter, retries, reads its beat back, self-heals); the Reader
// lists a zone's beats and judges them into a Snapshot of clusters and
// regions. Both report through an Observer of typed events. The rules in
// full, with their numbers, are in docs/heartbeat.md of the module's
// repository. See Example for a beat written, read and judged in an
// in-memory zone.
package heartbeat
