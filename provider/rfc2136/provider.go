package rfc2136

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// Provider reads a zone by AXFR and changes it by RFC 2136 UPDATE, both
// over TCP and signed with the configured TSIG key. It sends the messages
// github.com/libdns/rfc2136 v1.0.1 sends (SetRecords deletes each
// given RRset and adds the given records in one UPDATE, so the server
// applies it atomically), but talks to the server through miekg/dns itself
// so that it can:
//
//   - classify errors: every error answers Throttled() and Temporary()
//     (a *ResponseError for the server's response code: SERVFAIL is
//     transient, REFUSED/NOTAUTH/NOTZONE and the rest permanent; TSIG
//     failures permanent; timeouts and network errors transient);
//   - return TXT text byte for byte (the upstream module returns the
//     wire's escapes, e.g. \" for a quote) and keep a TXT's strings (see
//     the package doc);
//   - honour context cancellation during I/O, not only deadlines;
//   - delete with the libdns wildcards and return only what was deleted
//     (DeleteRecords reads the zone before and after), and append
//     returning only what was created (AppendRecords reads the zone
//     first), as libdns documents.
//
// GetRecords returns the whole transfer: the SOA twice (first and last,
// as AXFR sends it), the apex NS and glue included. A CNAME added beside
// other data (or at the apex) is silently ignored by BIND and Knot, as
// RFC 2136 section 3.4.2.2 prescribes, and refused by PowerDNS (a
// permanent *ResponseError, REFUSED); read back to see what was applied
// (record.Reconciler does).
//
// Provider is safe for concurrent use; each call opens its own connection.
type Provider struct {
	cfg     Config
	addr    string
	keyName string
	keyAlg  string
	secrets map[string]string

	// mu serialises DeleteRecords' read-then-delete per Provider so that
	// concurrent deletes report what each one deleted.
	mu sync.Mutex
}

// New validates cfg and returns a Provider. It does not contact the
// server. cfg is copied.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	addr, _ := serverAddr(cfg.Server)
	p := &Provider{cfg: cfg, addr: addr}
	if cfg.KeyName != "" {
		p.keyName = dns.Fqdn(strings.ToLower(cfg.KeyName))
		p.keyAlg = dns.Fqdn(strings.ToLower(cfg.KeyAlg))
		p.secrets = map[string]string{p.keyName: cfg.Secret}
	}
	return p, nil
}

// Config returns the provider's configuration, defaults filled in.
func (p *Provider) Config() Config { return p.cfg }

func (p *Provider) client() *dns.Client {
	return &dns.Client{Net: "tcp", TsigSecret: p.secrets, Timeout: p.cfg.Timeout}
}

func (p *Provider) sign(m *dns.Msg) {
	if p.keyName != "" {
		m.SetTsig(p.keyName, p.keyAlg, 300, time.Now().Unix())
	}
}

// withTimeout applies the configured timeout when ctx has no earlier
// deadline.
func (p *Provider) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.cfg.Timeout)
}

// update sends one UPDATE message and checks the answer.
func (p *Provider) update(ctx context.Context, zone string, m *dns.Msg) error {
	if p.addr == "" {
		return ErrNotConfigured
	}
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	p.sign(m)
	c := p.client()
	conn, err := c.DialContext(ctx, p.addr)
	if err != nil {
		return classify("update", zone, ctxOr(ctx, err))
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	r, _, err := c.ExchangeWithConnContext(ctx, m, conn)
	if err != nil {
		return classify("update", zone, ctxOr(ctx, err))
	}
	if r.Rcode != dns.RcodeSuccess {
		return responseError("update", zone, r)
	}
	return nil
}

// ctxOr returns ctx's error, wrapping err, when ctx has ended (the
// connection was closed under the exchange); else err.
func ctxOr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	return err
}

// toRR converts a libdns record to a miekg/dns RR in zone. TXT text is
// split into 255-byte strings and escaped (a libdns.RR whose TXT data
// begins with a double quote is presentation form, several strings); A and AAAA are built from the
// parsed address; other types are parsed from zone-file syntax.
func toRR(r libdns.Record, zone string) (dns.RR, error) {
	rr := r.RR()
	if rr.Name == "" {
		return nil, fmt.Errorf("rfc2136: record %+v: empty name (use \"@\" for the apex)", rr)
	}
	name := libdns.AbsoluteName(rr.Name, zone)
	hdr := dns.RR_Header{Name: dns.Fqdn(name), Class: dns.ClassINET, Ttl: uint32(rr.TTL / time.Second)}
	typ := strings.ToUpper(rr.Type)
	switch typ {
	case "TXT":
		hdr.Rrtype = dns.TypeTXT
		ss, err := txtInput(r, rr.Data)
		if err != nil {
			return nil, fmt.Errorf("rfc2136: record %s TXT: %w", rr.Name, err)
		}
		return &dns.TXT{Hdr: hdr, Txt: ss}, nil
	case "A", "AAAA":
		ip := net.ParseIP(strings.TrimSpace(rr.Data))
		if ip == nil || (typ == "A") != (ip.To4() != nil) {
			return nil, fmt.Errorf("rfc2136: record %s %s: data %q is not an IPv%s address", rr.Name, typ, rr.Data, map[bool]string{true: "4", false: "6"}[typ == "A"])
		}
		if typ == "A" {
			hdr.Rrtype = dns.TypeA
			return &dns.A{Hdr: hdr, A: ip.To4()}, nil
		}
		hdr.Rrtype = dns.TypeAAAA
		return &dns.AAAA{Hdr: hdr, AAAA: ip}, nil
	}
	if strings.ContainsAny(rr.Data, "\n;") {
		return nil, fmt.Errorf("rfc2136: record %s %s: data %q holds a newline or ';'", rr.Name, typ, rr.Data)
	}
	out, err := dns.NewRR(fmt.Sprintf("$ORIGIN %s\n%s %d IN %s %s", zone, dns.Fqdn(name), hdr.Ttl, typ, rr.Data))
	if err != nil {
		return nil, fmt.Errorf("rfc2136: record %s %s %q: %w", rr.Name, typ, rr.Data, err)
	}
	if out == nil {
		return nil, fmt.Errorf("rfc2136: record %s %s: no data", rr.Name, typ)
	}
	return out, nil
}

func toRRs(recs []libdns.Record, zone string) ([]dns.RR, error) {
	out := make([]dns.RR, 0, len(recs))
	for _, r := range recs {
		rr, err := toRR(r, zone)
		if err != nil {
			return nil, err
		}
		out = append(out, rr)
	}
	return out, nil
}

// fromRR converts a transferred RR to a typed libdns record.
func fromRR(rr dns.RR, zone string) libdns.Record {
	hdr := rr.Header()
	name, _ := relative(hdr.Name, zone)
	out := libdns.RR{Name: name, TTL: time.Duration(hdr.Ttl) * time.Second, Type: dns.TypeToString[hdr.Rrtype]}
	switch v := rr.(type) {
	case *dns.TXT:
		ss := make([]string, len(v.Txt))
		for i, s := range v.Txt {
			ss[i] = zoneops.UnescapeTXT(s)
		}
		data, plain := zoneops.TXTData(ss)
		out.Data = data
		if !plain {
			return out // several strings: presentation form, a libdns.RR
		}
		return libdns.TXT{Name: out.Name, TTL: out.TTL, Text: data}
	case *dns.RFC3597:
		out.Type = fmt.Sprintf("TYPE%d", hdr.Rrtype)
		out.Data = v.String()[len(v.Header().String()):]
		if i := strings.Index(out.Data, `\#`); i >= 0 {
			out.Data = out.Data[i:]
		}
	default:
		out.Data = strings.TrimPrefix(rr.String(), hdr.String())
	}
	return zoneops.Typed(out)
}

// relative returns name relative to zone, "@" for the apex, compared
// without regard to case.
func relative(name, zone string) (string, bool) {
	n := strings.ToLower(dns.Fqdn(name))
	if n == zone {
		return "@", true
	}
	if strings.HasSuffix(n, "."+zone) {
		return strings.TrimSuffix(n, "."+zone), true
	}
	return n, false
}

// GetRecords transfers the zone (AXFR over TCP, TSIG-signed) and returns
// every record in it, typed, with relative names.
func (p *Provider) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	z, err := zoneops.Zone(zone)
	if err != nil {
		return nil, fmt.Errorf("rfc2136: %w", err)
	}
	rrs, err := p.transfer(ctx, z)
	if err != nil {
		return nil, err
	}
	out := make([]libdns.Record, 0, len(rrs))
	for _, rr := range rrs {
		out = append(out, fromRR(rr, z))
	}
	return out, nil
}

// AppendRecords adds recs in one UPDATE and returns the records it
// created, typed (as libdns documents): it reads the zone first (one
// AXFR) and neither sends nor returns records already there or given
// twice (adding a record that exists would be a no-op on the server, RFC
// 2136 section 3.4.2.2). Records added by others between the read and
// the update may be returned as created.
func (p *Provider) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	z, err := zoneops.Zone(zone)
	if err != nil {
		return nil, fmt.Errorf("rfc2136: %w", err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	existing, err := p.GetRecords(ctx, z)
	if err != nil {
		return nil, err
	}
	have := make(map[zoneops.Key]bool, len(existing))
	for _, r := range existing {
		have[zoneops.KeyOf(r, z)] = true
	}
	var fresh []libdns.Record
	for _, r := range recs {
		if k := zoneops.KeyOf(r, z); !have[k] {
			have[k] = true
			fresh = append(fresh, r)
		}
	}
	return p.write(ctx, z, fresh, false)
}

// SetRecords replaces each (name, type) RRset named in recs with the
// records given for it, in one UPDATE that the server applies atomically
// (RFC 2136 section 3.7): either every RRset is replaced or none. It
// returns recs, typed.
func (p *Provider) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return p.write(ctx, zone, recs, true)
}

// write sends recs in one UPDATE: inserted, after removing their RRsets
// first when replace is set.
func (p *Provider) write(ctx context.Context, zone string, recs []libdns.Record, replace bool) ([]libdns.Record, error) {
	z, err := zoneops.Zone(zone)
	if err != nil {
		return nil, fmt.Errorf("rfc2136: %w", err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	rrs, err := toRRs(recs, z)
	if err != nil {
		return nil, err
	}
	m := new(dns.Msg)
	m.SetUpdate(z)
	if replace {
		m.RemoveRRset(rrs)
	}
	m.Insert(rrs)
	if err := p.update(ctx, z, m); err != nil {
		return nil, err
	}
	return zoneops.TypedAll(recs), nil
}

// DeleteRecords deletes the zone's records that match recs, an empty type,
// TTL or value matching anything (libdns v1). It reads the zone first,
// deletes exactly the matching records in one UPDATE (an SVCB or HTTPS
// set losing some records is replaced by the rest in the same UPDATE,
// which servers that ignore the deletion of one such record apply), reads
// the zone again and returns the records that are gone, as they were. Records added by others between the read and the update are not
// deleted. The SOA and the apex NS records are never deleted (the zone
// cannot live without them).
func (p *Provider) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	z, err := zoneops.Zone(zone)
	if err != nil {
		return nil, fmt.Errorf("rfc2136: %w", err)
	}
	for _, r := range recs {
		if r.RR().Name == "" {
			return nil, fmt.Errorf("rfc2136: DeleteRecords: record %+v has an empty name; the name is never a wildcard", r.RR())
		}
	}
	if len(recs) == 0 {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	existing, err := p.GetRecords(ctx, z)
	if err != nil {
		return nil, err
	}
	var doomed []libdns.Record
	for _, r := range zoneops.Deletions(existing, recs, z) {
		// Never delete the SOA or the apex NS by wildcard: the server
		// refuses to leave a zone without them anyway.
		if rr := r.RR(); rr.Type == "SOA" || (rr.Type == "NS" && rr.Name == "@") {
			continue
		}
		doomed = append(doomed, r)
	}
	if len(doomed) == 0 {
		return nil, nil
	}
	m := new(dns.Msg)
	m.SetUpdate(z)
	single, whole, err := splitSVCB(existing, doomed, z)
	if err != nil {
		return nil, err
	}
	if len(single) > 0 {
		rrs, err := toRRs(single, z)
		if err != nil {
			return nil, err
		}
		m.Remove(rrs)
	}
	for _, w := range whole {
		// Replace the set by what stays: some servers (PowerDNS 4.7) do
		// not apply the deletion of one SVCB or HTTPS record of a set,
		// but do delete a whole set.
		del, err := toRRs(w.set[:1], z)
		if err != nil {
			return nil, err
		}
		m.RemoveRRset(del)
		if len(w.keep) > 0 {
			keep, err := toRRs(w.keep, z)
			if err != nil {
				return nil, err
			}
			m.Insert(keep)
		}
	}
	if err := p.update(ctx, z, m); err != nil {
		return nil, err
	}
	// Return what is gone: a server may accept an UPDATE and leave some
	// of it undone (RFC 2136 prerequisites aside, servers differ).
	after, err := p.GetRecords(ctx, z)
	if err != nil {
		return nil, err
	}
	left := map[zoneops.Key]bool{}
	for _, r := range after {
		left[zoneops.KeyOf(r, z)] = true
	}
	gone := doomed[:0:0]
	for _, r := range doomed {
		if !left[zoneops.KeyOf(r, z)] {
			gone = append(gone, r)
		}
	}
	return gone, nil
}

// svcbSet is an SVCB or HTTPS set losing some of its records: set are the
// records deleted, keep those that stay.
type svcbSet struct{ set, keep []libdns.Record }

// splitSVCB splits the records to delete into those deleted one by one
// and the SVCB/HTTPS sets rewritten whole (delete the set, add back what
// stays) in the same UPDATE.
func splitSVCB(existing, doomed []libdns.Record, zone string) ([]libdns.Record, []svcbSet, error) {
	var single []libdns.Record
	sets := map[zoneops.RRset]*svcbSet{}
	var order []zoneops.RRset
	for _, r := range doomed {
		k := zoneops.KeyOf(r, zone)
		if k.Type != "SVCB" && k.Type != "HTTPS" {
			single = append(single, r)
			continue
		}
		if sets[k.Set()] == nil {
			sets[k.Set()] = &svcbSet{}
			order = append(order, k.Set())
		}
		sets[k.Set()].set = append(sets[k.Set()].set, r)
	}
	if len(order) == 0 {
		return single, nil, nil
	}
	gone := map[zoneops.Key]bool{}
	for _, r := range doomed {
		gone[zoneops.KeyOf(r, zone)] = true
	}
	for _, r := range existing {
		k := zoneops.KeyOf(r, zone)
		if w := sets[k.Set()]; w != nil && !gone[k] {
			w.keep = append(w.keep, r)
		}
	}
	out := make([]svcbSet, 0, len(order))
	for _, k := range order {
		out = append(out, *sets[k])
	}
	return single, out, nil
}

var (
	_ libdns.RecordGetter   = (*Provider)(nil)
	_ libdns.RecordAppender = (*Provider)(nil)
	_ libdns.RecordSetter   = (*Provider)(nil)
	_ libdns.RecordDeleter  = (*Provider)(nil)
)
