package cloudflare

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/libdns/libdns"
)

// GetRecords lists the zone's DNS records, typed, with relative names.
func (p *Provider) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	z, zid, err := p.prepare(ctx, zone)
	if err != nil {
		return nil, err
	}
	recs, err := p.list(ctx, zid)
	if err != nil {
		return nil, err
	}
	out := make([]libdns.Record, 0, len(recs))
	for _, r := range recs {
		out = append(out, fromCF(r, z))
	}
	return out, nil
}

// AppendRecords creates recs in one atomic batch and returns the records
// Cloudflare created, typed (as libdns documents). It reads the zone
// first and neither sends nor returns records already there or given
// twice (Cloudflare refuses a record identical to one that exists, code
// 81058). Cloudflare refuses a CNAME beside other data (81053).
func (p *Provider) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	z, zid, err := p.prepare(ctx, zone)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	if _, err := toCFAll(recs, z); err != nil {
		return nil, err
	}
	p.rmw.Lock()
	defer p.rmw.Unlock()
	current, err := p.list(ctx, zid)
	if err != nil {
		return nil, err
	}
	have := map[zoneops.Key]bool{}
	for _, c := range current {
		have[zoneops.KeyOf(fromCF(c, z), z)] = true
	}
	var fresh []libdns.Record
	for _, r := range recs {
		if k := zoneops.KeyOf(r, z); !have[k] {
			have[k] = true
			fresh = append(fresh, r)
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	posts, err := toCFAll(fresh, z)
	if err != nil {
		return nil, err
	}
	res, err := p.batch(ctx, zid, batch{Posts: posts})
	if err != nil {
		return nil, err
	}
	return fromCFAll(res.Posts, z), nil
}

// SetRecords makes each (name, type) RRset named in recs hold exactly the
// records given for it: one atomic batch deletes the RRsets' records that
// are not wanted (or whose TTL differs) and creates the missing ones.
// Records already right are left alone. It returns recs, typed.
func (p *Provider) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	z, zid, err := p.prepare(ctx, zone)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	if _, err := toCFAll(recs, z); err != nil {
		return nil, err
	}
	p.rmw.Lock()
	defer p.rmw.Unlock()
	current, err := p.list(ctx, zid)
	if err != nil {
		return nil, err
	}
	ids := newIDIndex(current, z)
	var b batch
	for _, ch := range zoneops.SetChanges(ids.records, recs, z) {
		for _, d := range ch.Delete {
			b.Deletes = append(b.Deletes, cfID{ID: ids.take(d)})
		}
		posts, err := toCFAll(ch.Add, z)
		if err != nil {
			return nil, err
		}
		b.Posts = append(b.Posts, posts...)
	}
	if _, err := p.batch(ctx, zid, b); err != nil {
		return nil, err
	}
	return zoneops.TypedAll(recs), nil
}

// DeleteRecords deletes the zone's records matching recs (an empty type,
// TTL or value matches anything; the name is required) in one atomic
// batch and returns them.
func (p *Provider) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	for _, r := range recs {
		if r.RR().Name == "" {
			return nil, fmt.Errorf("cloudflare: DeleteRecords: record %+v has an empty name; the name is never a wildcard", r.RR())
		}
	}
	z, zid, err := p.prepare(ctx, zone)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	p.rmw.Lock()
	defer p.rmw.Unlock()
	current, err := p.list(ctx, zid)
	if err != nil {
		return nil, err
	}
	ids := newIDIndex(current, z)
	doomed := zoneops.Deletions(ids.records, recs, z)
	var b batch
	for _, d := range doomed {
		b.Deletes = append(b.Deletes, cfID{ID: ids.take(d)})
	}
	if _, err := p.batch(ctx, zid, b); err != nil {
		return nil, err
	}
	return doomed, nil
}

// ReplaceRecords implements record.Replacer with one atomic batch, which
// Cloudflare applies all or nothing, its deletes before its posts: it
// deletes del (records as GetRecords returned them, matched exactly) and
// makes each RRset named in set hold exactly its records, as SetRecords
// does. A name thus switches between a CNAME and addresses in one step,
// never answering neither.
func (p *Provider) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	z, zid, err := p.prepare(ctx, zone)
	if err != nil || len(del)+len(set) == 0 {
		return err
	}
	if _, err := toCFAll(set, z); err != nil {
		return err
	}
	p.rmw.Lock()
	defer p.rmw.Unlock()
	current, err := p.list(ctx, zid)
	if err != nil {
		return err
	}
	ids := newIDIndex(current, z)
	var b batch
	doomed := map[idKey]int{}
	for _, d := range zoneops.Deletions(ids.records, del, z) {
		doomed[idKey{zoneops.KeyOf(d, z), d.RR().TTL}]++
		b.Deletes = append(b.Deletes, cfID{ID: ids.take(d)})
	}
	var left []libdns.Record // the records set is compared with
	for _, r := range ids.records {
		if k := (idKey{zoneops.KeyOf(r, z), r.RR().TTL}); doomed[k] > 0 {
			doomed[k]--
			continue
		}
		left = append(left, r)
	}
	for _, ch := range zoneops.SetChanges(left, set, z) {
		for _, d := range ch.Delete {
			b.Deletes = append(b.Deletes, cfID{ID: ids.take(d)})
		}
		posts, err := toCFAll(ch.Add, z)
		if err != nil {
			return err
		}
		b.Posts = append(b.Posts, posts...)
	}
	if len(b.Deletes)+len(b.Posts) == 0 {
		return nil
	}
	_, err = p.batch(ctx, zid, b)
	return err
}

// ListZones lists the zones the token can see, fully qualified.
func (p *Provider) ListZones(ctx context.Context) ([]libdns.Zone, error) {
	var out []libdns.Zone
	for page := 1; ; page++ {
		var zs []cfZone
		env, err := p.do(ctx, http.MethodGet, fmt.Sprintf("/zones?page=%d&per_page=50", page), p.cfg.ZoneToken, nil, &zs)
		if err != nil {
			return nil, err
		}
		for _, z := range zs {
			out = append(out, libdns.Zone{Name: z.Name + "."})
		}
		last := len(zs) < 50
		if ri := env.ResultInfo; ri != nil && ri.TotalPages > 0 {
			last = page >= ri.TotalPages
		}
		if last || len(zs) == 0 {
			return out, nil
		}
	}
}

func toCFAll(recs []libdns.Record, zone string) ([]cfRecord, error) {
	out := make([]cfRecord, 0, len(recs))
	for _, r := range recs {
		c, err := toCF(r, zone)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func fromCFAll(recs []cfRecord, zone string) []libdns.Record {
	out := make([]libdns.Record, 0, len(recs))
	for _, r := range recs {
		out = append(out, fromCF(r, zone))
	}
	return out
}

// idIndex finds the Cloudflare ID of a record read from the zone.
type idIndex struct {
	records []libdns.Record
	ids     map[idKey][]string
	zone    string
}

type idKey struct {
	zoneops.Key
	TTL time.Duration
}

func newIDIndex(current []cfRecord, zone string) *idIndex {
	x := &idIndex{ids: map[idKey][]string{}, zone: zone}
	for _, c := range current {
		r := fromCF(c, zone)
		x.records = append(x.records, r)
		k := idKey{zoneops.KeyOf(r, zone), r.RR().TTL}
		x.ids[k] = append(x.ids[k], c.ID)
	}
	return x
}

// take returns (and forgets) the ID of one record equal to r.
func (x *idIndex) take(r libdns.Record) string {
	k := idKey{zoneops.KeyOf(r, x.zone), r.RR().TTL}
	ids := x.ids[k]
	if len(ids) == 0 {
		return ""
	}
	x.ids[k] = ids[1:]
	return ids[0]
}

var (
	_ libdns.RecordGetter   = (*Provider)(nil)
	_ libdns.RecordAppender = (*Provider)(nil)
	_ libdns.RecordSetter   = (*Provider)(nil)
	_ libdns.RecordDeleter  = (*Provider)(nil)
	_ libdns.ZoneLister     = (*Provider)(nil)
	_ interface {
		ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error
	} = (*Provider)(nil)
)
