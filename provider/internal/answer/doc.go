// Package answer answers DNS queries authoritatively from zones of the
// internal/zonedata model: the general path (Engine.Respond,
// Engine.RespondWire: unpack, look up as RFC 1034 section 4.3.2 and RFC
// 4592 say, ask the answer hooks, sign online, pack) and the fast path
// over it (Engine.RespondUDP, Engine.RespondTCP). provider/memory's
// Provider holds one Engine and publishes its zones to it with every
// change (Engine.Publish); its Respond, RespondWire, RespondUDP and
// RespondTCP are this package's, documented there.
//
// The packed-reply cache lives here, in the Engine, keyed on the zones and
// the hooks it answers from (a write or a hook registered starts an empty
// one): a cached reply is only as right as the general path that produced
// it and the zones it read, so the cache sits next to both, and the DNS
// server (provider/dnsserver) only moves bytes. Past the cache, replies of
// the common static kinds are written straight from the records
// (faststatic.go), and hooked answers are assembled from packed parts
// (fasthook.go) with no allocation. Every fast reply is byte for byte the
// general path's; provider/memory's FuzzFastPath and differential tests
// check it.
package answer
