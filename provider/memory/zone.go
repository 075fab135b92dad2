package memory

import (
	"slices"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/gslbkit/gslb/provider/internal/zonedata"
)

// SOA is a zone's start-of-authority record. Times are in seconds, as on the
// wire. The zone bumps Serial by one on every call that changes it (RFC 1982
// arithmetic: after 4294967295 comes 1).
type SOA struct {
	// NS is the primary name server (MNAME), fully qualified.
	NS string `json:"ns"`
	// Mbox is the responsible mailbox (RNAME), fully qualified.
	Mbox string `json:"mbox"`
	// Serial is the zone's serial number.
	Serial uint32 `json:"serial"`
	// Refresh, Retry and Expire are the secondary-server timers, in seconds.
	Refresh uint32 `json:"refresh"`
	Retry   uint32 `json:"retry"`
	Expire  uint32 `json:"expire"`
	// Minimum is the negative-caching TTL in seconds (RFC 2308).
	Minimum uint32 `json:"minimum"`
	// TTL is the SOA record's own TTL in seconds.
	TTL uint32 `json:"ttl"`
}

// qualify returns name relative to zone unless it ends with a dot, lower case.
func qualify(name, zone string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if strings.HasSuffix(name, ".") {
		return name
	}
	if zone == "." {
		return name + "."
	}
	return name + "." + zone
}

// The zone model lives in provider/internal/zonedata; these are its names here.
type (
	zone = zonedata.Zone
	node = zonedata.Node
	rec  = zonedata.Rec
)

func secs(d time.Duration) uint32 { s, _ := zonerecord.TTL(d); return s }

func sortStrings(s []string) { slices.Sort(s) }
