// Package heartbeat shares cluster liveness through DNS TXT records, the
// way the heartbeat controller does: every cluster's controller writes a
// small timestamped beat at health-001-<cluster>.<zone> while its own
// gateways are healthy, and every controller reads the others' beats to
// decide which clusters, and so which regions, are alive. Local beats live
// in a region's private zone (they build the regional record); global
// beats live in the global zone (they build the failover record).
//
// A Beat is one TXT string of at most 255 bytes — format version, cluster,
// region, timestamp, optional healthy-gateway count and self-heal flag —
// optionally signed with HMAC-SHA256 by a Keyring whose key id travels in
// the beat, so keys rotate. Format version 1 (v=gslb1) carries at most a
// healthy count; version 2 (v=gslb2) adds the cluster's gateway summary,
// healthy of total gateways (Beat.Summary; RegionStatus sums them), so
// other regions see how much of a cluster serves, never which gateways.
// This package reads both, a version-1 beat as "summary unknown".
// Upgrading to version 2 takes two steps, since readers of earlier
// releases reject it (ErrVersion) and would judge its writer stale: first
// deploy this release everywhere (it writes version 1 by default), then set
// Config.BeatVersion to 2 on the writers. ParseBeat and Keyring.Open never trust their
// input. Rules are pure functions of a timestamp and now: a beat is fresh
// while now − ts ≤ HealthyDuration + SkewTolerance, a beat stamped further
// ahead than SelfHealInterval + SkewTolerance is rejected (by the Reader
// before it picks a cluster's newest beat, so a beat dated far ahead can
// neither win nor hide a fresh beat beside it), and the Healer
// turns the publisher's next beat into a self-heal beat (stamped now +
// SelfHealInterval) as soon as its own read-back beat is older than
// HealthyDuration − 2 × ReconcileInterval, so a write throttle never lets
// peers see it stale; it is "recovering from rate limiting" until a normal
// beat has been written and read back.
//
// The Publisher is the thin loop around those rules: one goroutine per
// scope writes through any libdns RecordSetter, retries within the
// interval (more often while its beat is aging into a self-heal beat, so a
// 15 s write outage followed by 2-of-3 rejections still lands a beat
// within 30 s), judges errors by behaviour (Throttled, Temporary), reads
// its beat back and self-heals. The Reader lists a zone's beats, verifies and
// judges them into a Snapshot of clusters (fresh or stale and why) and
// regions (healthy, failover in progress), remembering clusters whose
// records vanish. Both report through an Observer of typed events carrying
// what the reference controller's metrics need. See Example for a beat
// written, read and judged in an in-memory zone.
package heartbeat
