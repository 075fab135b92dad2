// Package dnssec signs DNS answers online: keys in BIND's file format (or
// PKCS#8 PEM), a Signer that makes RRSIGs for any RRset on demand and
// caches them per exact RRset, and the NSEC records of compact denial of
// existence (RFC 9824), the negative answers an online signer gives.
//
// A Signer is made with NewSigner from a Config: the zone's keys (one
// combined signing key by default, KSK and ZSK apart if wanted), the
// signatures' validity, inception back-dating and refresh margin, the cache
// bounds and a budget of signatures per second. Sign takes the time as a
// parameter; it signs on a cache miss, inline ("sign once and cache"), and
// returns ErrOverBudget when the budget is spent. SetKeys moves a rollover
// forward (publish a key without signing with it, sign with two, retire
// one). Keys print without their private part.
//
// The embedded server (provider/memory) uses it through
// memory.ZoneConfig.Signer; docs/dnssec.md describes the choices, the
// settings and the rollover procedures.
package dnssec
