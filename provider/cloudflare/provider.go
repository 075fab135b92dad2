package cloudflare

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/libdns/libdns"
)

// maxTXTContent is the longest TXT content Cloudflare accepts, quoted
// strings included (its DNS record attributes: 2,048 characters).
const maxTXTContent = 2048

// autoTTL is the TTL Cloudflare means by "ttl": 1 ("automatic").
const autoTTL = 300 * time.Second

// Provider is the Cloudflare adapter. It speaks Cloudflare's API v4
// (/zones, /zones/{id}/dns_records and its /batch endpoint) with the
// configured HTTPClient, the same requests github.com/libdns/cloudflare
// v0.2.2 sends for reads, with gslbkit's conventions:
//
//   - every write is one /dns_records/batch request, which Cloudflare
//     applies atomically: SetRecords replaces whole RRsets (the upstream
//     module updates one record per call and fails on RRsets of several),
//     DeleteRecords honours libdns v1's wildcards and returns only what it
//     deleted;
//   - errors are *APIError (HTTP 429 or code 971 throttled, with the
//     Retry-After wait; 5xx transient; other 4xx permanent) or transport
//     errors marked with a class (see provider.ErrorClass), all answering Throttled() and
//     Temporary();
//   - TXT text is written as quoted 255-byte strings with RFC 1035
//     escapes and read back byte for byte; a TXT given in presentation
//     form (a libdns.RR whose data begins with a double quote, several
//     strings) keeps its strings and reads back in the same form; content
//     longer than Cloudflare's 2,048 characters is refused before sending.
//
// Cloudflare's rules apply: a CNAME beside other data is refused (code
// 81053), a CNAME at the apex is accepted and flattened, TTLs are 60 s to
// a day or "automatic" (a TTL of 0 is sent as automatic and read back as
// 300 s). Writable types are A, AAAA, CNAME, TXT, NS and MX; others are
// read (as libdns.RR when they do not parse) but refused on write.
// Cloudflare's own SOA and NS are not part of the API, so GetRecords does
// not return them.
//
// Provider is safe for concurrent use; read-modify-write calls
// (AppendRecords, SetRecords, DeleteRecords) are serialised within one
// Provider.
type Provider struct {
	cfg    Config
	client HTTPClient

	mu    sync.Mutex
	zones map[string]string // zone name → zone ID

	rmw sync.Mutex
}

// New validates cfg and returns a Provider. It contacts nothing. cfg is
// copied.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	c := cfg.HTTPClient
	if c == nil {
		c = &http.Client{Timeout: cfg.Timeout}
	}
	return &Provider{cfg: cfg, client: c, zones: map[string]string{}}, nil
}

// Config returns the provider's configuration, defaults filled in.
func (p *Provider) Config() Config { return p.cfg }

// cfRecord is a DNS record in Cloudflare's JSON.
type cfRecord struct {
	ID       string  `json:"id,omitempty"`
	Type     string  `json:"type"`
	Name     string  `json:"name"`
	Content  string  `json:"content"`
	TTL      int     `json:"ttl"`
	Priority *uint16 `json:"priority,omitempty"`
}

type cfZone struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// toCF converts a libdns record for zone into Cloudflare's form.
func toCF(r libdns.Record, zone string) (cfRecord, error) {
	rr := r.RR()
	if rr.Name == "" {
		return cfRecord{}, fmt.Errorf("cloudflare: record %+v: empty name (use \"@\" for the apex)", rr)
	}
	c := cfRecord{
		Type: strings.ToUpper(rr.Type),
		Name: strings.TrimSuffix(strings.ToLower(libdns.AbsoluteName(rr.Name, zone)), "."),
		TTL:  int(rr.TTL / time.Second),
	}
	if c.TTL == 0 {
		c.TTL = 1 // automatic
	}
	switch c.Type {
	case "A", "AAAA":
		ip, err := netip.ParseAddr(strings.TrimSpace(rr.Data))
		if err != nil || (c.Type == "A") != ip.Unmap().Is4() {
			return cfRecord{}, fmt.Errorf("cloudflare: record %s %s: data %q is not an IPv%s address", rr.Name, c.Type, rr.Data, map[bool]string{true: "4", false: "6"}[c.Type == "A"])
		}
		c.Content = ip.Unmap().String()
	case "CNAME", "NS":
		c.Content = strings.TrimSuffix(strings.TrimSpace(rr.Data), ".")
	case "TXT":
		ss, err := zoneops.TXTInput(r)
		if err != nil {
			return cfRecord{}, fmt.Errorf("cloudflare: record %s TXT: %w", rr.Name, err)
		}
		c.Content = zoneops.QuoteTXTStrings(ss, zoneops.Decimal)
		if len(c.Content) > maxTXTContent {
			return cfRecord{}, fmt.Errorf("cloudflare: record %s TXT: content of %d characters once quoted and escaped; Cloudflare accepts at most %d", rr.Name, len(c.Content), maxTXTContent)
		}
	case "MX":
		f := strings.Fields(rr.Data)
		pref, err := strconv.ParseUint(f0(f), 10, 16)
		if len(f) != 2 || err != nil {
			return cfRecord{}, fmt.Errorf("cloudflare: record %s MX: data %q: want \"preference target\"", rr.Name, rr.Data)
		}
		p := uint16(pref)
		c.Priority, c.Content = &p, strings.TrimSuffix(f[1], ".")
	default:
		return cfRecord{}, fmt.Errorf("cloudflare: record %s: type %q cannot be written by this adapter (A, AAAA, CNAME, TXT, NS, MX)", rr.Name, rr.Type)
	}
	return c, nil
}

func f0(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// fromCF converts a Cloudflare record into a typed libdns record.
func fromCF(c cfRecord, zone string) libdns.Record {
	rr := libdns.RR{
		Name: zoneops.Name(strings.ToLower(c.Name)+".", zone),
		Type: strings.ToUpper(c.Type),
		TTL:  time.Duration(c.TTL) * time.Second,
		Data: c.Content,
	}
	if c.TTL == 1 {
		rr.TTL = autoTTL
	}
	switch rr.Type {
	case "CNAME", "NS":
		rr.Data = strings.TrimSuffix(c.Content, ".") + "."
	case "TXT":
		if !zoneops.IsTXTStrings(c.Content) {
			// Unquoted content (records made before Cloudflare quoted
			// TXT content) is one text.
			return libdns.TXT{Name: rr.Name, TTL: rr.TTL, Text: c.Content}
		}
		data, plain := zoneops.TXTData(zoneops.UnquoteTXTStrings(c.Content, zoneops.Decimal))
		rr.Data = data
		if !plain {
			return rr // several strings: presentation form, a libdns.RR
		}
		return libdns.TXT{Name: rr.Name, TTL: rr.TTL, Text: data}
	case "MX":
		var pref uint16
		if c.Priority != nil {
			pref = *c.Priority
		}
		rr.Data = fmt.Sprintf("%d %s.", pref, strings.TrimSuffix(c.Content, "."))
	}
	return zoneops.Typed(rr)
}

// zoneID returns the ID of zone (normalised), configured or looked up.
func (p *Provider) zoneID(ctx context.Context, zone string) (string, error) {
	if p.cfg.ZoneID != "" {
		return p.cfg.ZoneID, nil
	}
	p.mu.Lock()
	id, ok := p.zones[zone]
	p.mu.Unlock()
	if ok {
		return id, nil
	}
	var zs []cfZone
	name := strings.TrimSuffix(zone, ".")
	if _, err := p.do(ctx, http.MethodGet, "/zones?name="+url.QueryEscape(name), p.cfg.ZoneToken, nil, &zs); err != nil {
		return "", err
	}
	for _, z := range zs {
		if strings.EqualFold(z.Name, name) {
			p.mu.Lock()
			p.zones[zone] = z.ID
			p.mu.Unlock()
			return z.ID, nil
		}
	}
	return "", fmt.Errorf("%w: %s", ErrNoZone, zone)
}

func (p *Provider) prepare(ctx context.Context, zone string) (string, string, error) {
	z, err := zoneops.Zone(zone)
	if err != nil {
		return "", "", fmt.Errorf("cloudflare: %w", err)
	}
	id, err := p.zoneID(ctx, z)
	return z, id, err
}

// list returns every DNS record of the zone, page by page.
func (p *Provider) list(ctx context.Context, zid string) ([]cfRecord, error) {
	const perPage = 100
	var out []cfRecord
	for page := 1; ; page++ {
		var recs []cfRecord
		env, err := p.do(ctx, http.MethodGet, fmt.Sprintf("/zones/%s/dns_records?page=%d&per_page=%d", url.PathEscape(zid), page, perPage), "", nil, &recs)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
		last := len(recs) < perPage
		if ri := env.ResultInfo; ri != nil && ri.TotalPages > 0 {
			last = page >= ri.TotalPages
		}
		if last || len(recs) == 0 {
			return out, nil
		}
	}
}

// batch is the body of POST /zones/{id}/dns_records/batch; Cloudflare
// runs its deletes, then its posts, atomically.
type batch struct {
	Deletes []cfID     `json:"deletes,omitempty"`
	Posts   []cfRecord `json:"posts,omitempty"`
}

type cfID struct {
	ID string `json:"id"`
}

// batchResult is the result of a batch: the records deleted and created.
type batchResult struct {
	Deletes []cfRecord `json:"deletes"`
	Posts   []cfRecord `json:"posts"`
}

func (p *Provider) batch(ctx context.Context, zid string, b batch) (batchResult, error) {
	var res batchResult
	if len(b.Deletes) == 0 && len(b.Posts) == 0 {
		return res, nil
	}
	_, err := p.do(ctx, http.MethodPost, "/zones/"+url.PathEscape(zid)+"/dns_records/batch", "", b, &res)
	return res, err
}
