package route53

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/libdns/libdns"
)

// GetRecords lists every plain record of the hosted zone, typed, with
// relative names; the apex SOA and NS are included.
func (p *Provider) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	z, c, id, err := p.prepare(ctx, zone)
	if err != nil {
		return nil, err
	}
	sets, err := p.list(ctx, c, z, id)
	if err != nil {
		return nil, err
	}
	var out []libdns.Record
	for _, s := range sets {
		out = append(out, fromSet(s, z)...)
	}
	return out, nil
}

// SetRecords replaces each (name, type) RRset named in recs with the
// records given for it, all in one change batch (atomic), and returns
// recs, typed.
func (p *Provider) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	z, c, id, err := p.prepare(ctx, zone)
	if err != nil {
		return nil, err
	}
	gs, err := groups(recs, z)
	if err != nil || len(gs) == 0 {
		return nil, err
	}
	changes := make([]types.Change, 0, len(gs))
	for _, g := range gs {
		values := make([]string, 0, len(g.recs))
		for _, r := range g.recs {
			v, err := encodeValue(r)
			if err != nil {
				return nil, err
			}
			values = append(values, v)
		}
		changes = append(changes, upsert(g.name, g.set.Type, g.recs[0].RR().TTL, values))
	}
	if err := p.apply(ctx, c, "SetRecords", z, id, changes); err != nil {
		return nil, err
	}
	return zoneops.TypedAll(recs), nil
}

// AppendRecords adds recs to their RRsets, keeping what is there (and
// an existing RRset's TTL), in one change batch, and returns the records
// it created, typed (as libdns documents). Records already present, or
// given twice, are not added again and not returned.
func (p *Provider) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	z, c, id, err := p.prepare(ctx, zone)
	if err != nil {
		return nil, err
	}
	gs, err := groups(recs, z)
	if err != nil || len(gs) == 0 {
		return nil, err
	}
	p.rmw.Lock()
	defer p.rmw.Unlock()
	sets, err := p.list(ctx, c, z, id)
	if err != nil {
		return nil, err
	}
	changes := make([]types.Change, 0, len(gs))
	var created []libdns.Record
	for _, g := range gs {
		ttl := g.recs[0].RR().TTL
		var values []string
		have := map[zoneops.Key]bool{}
		if s, ok := findSet(sets, g, z); ok {
			ttl = time.Duration(aws.ToInt64(s.TTL)) * time.Second
			for _, r := range s.ResourceRecords {
				values = append(values, aws.ToString(r.Value))
			}
			for _, r := range fromSet(s, z) {
				have[zoneops.KeyOf(r, z)] = true
			}
		}
		n := len(values)
		for _, r := range g.recs {
			k := zoneops.KeyOf(r, z)
			if have[k] {
				continue
			}
			have[k] = true
			v, err := encodeValue(r)
			if err != nil {
				return nil, err
			}
			values = append(values, v)
			rec := zoneops.Typed(r)
			if n > 0 && !isTXT(r) { // joins an RRset: takes its TTL
				rr := r.RR()
				rr.TTL = ttl
				rec = zoneops.Typed(rr)
			} else if n > 0 {
				rec = libdns.TXT{Name: r.RR().Name, TTL: ttl, Text: r.RR().Data}
			}
			created = append(created, rec)
		}
		if len(values) > n {
			changes = append(changes, upsert(g.name, g.set.Type, ttl, values))
		}
	}
	if err := p.apply(ctx, c, "AppendRecords", z, id, changes); err != nil {
		return nil, err
	}
	return created, nil
}

func isTXT(r libdns.Record) bool {
	switch r.(type) {
	case libdns.TXT, *libdns.TXT:
		return true
	}
	return false
}

// findSet returns the listed RRset of g.
func findSet(sets []types.ResourceRecordSet, g *group, zone string) (types.ResourceRecordSet, bool) {
	for _, s := range sets {
		if zoneops.Name(decodeName(aws.ToString(s.Name)), zone) == g.set.Name && string(s.Type) == g.set.Type {
			return s, true
		}
	}
	return types.ResourceRecordSet{}, false
}

// DeleteRecords deletes the zone's records matching recs (an empty type,
// TTL or value matches anything; the name is required) in one change
// batch, and returns them. The apex SOA and NS are never deleted. An
// RRset losing all its records is DELETEd with its exact current
// contents, as Route 53 requires; one losing some is UPSERTed with the
// rest.
func (p *Provider) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	for _, r := range recs {
		if r.RR().Name == "" {
			return nil, fmt.Errorf("route53: DeleteRecords: record %+v has an empty name; the name is never a wildcard", r.RR())
		}
	}
	z, c, id, err := p.prepare(ctx, zone)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	p.rmw.Lock()
	defer p.rmw.Unlock()
	sets, err := p.list(ctx, c, z, id)
	if err != nil {
		return nil, err
	}
	changes, deleted := deletions(sets, recs, z)
	if err := p.apply(ctx, c, "DeleteRecords", z, id, changes); err != nil {
		return nil, err
	}
	return deleted, nil
}

// deletions returns the changes that delete the records of sets matching
// recs (libdns wildcards), and the records deleted: an RRset losing all
// its records is DELETEd with its exact contents, one losing some is
// UPSERTed with the rest; the apex SOA and NS are never touched.
func deletions(sets []types.ResourceRecordSet, recs []libdns.Record, z string) ([]types.Change, []libdns.Record) {
	var (
		changes []types.Change
		deleted []libdns.Record
	)
	for _, s := range sets {
		if zoneops.Name(decodeName(aws.ToString(s.Name)), z) == "@" && (s.Type == types.RRTypeSoa || s.Type == types.RRTypeNs) {
			continue
		}
		current := fromSet(s, z)
		var keep []string
		for i, r := range current {
			if len(zoneops.Deletions([]libdns.Record{r}, recs, z)) > 0 {
				deleted = append(deleted, r)
			} else {
				keep = append(keep, aws.ToString(s.ResourceRecords[i].Value))
			}
		}
		switch {
		case len(keep) == len(current):
		case len(keep) == 0:
			set := s
			changes = append(changes, types.Change{Action: types.ChangeActionDelete, ResourceRecordSet: &set})
		default:
			changes = append(changes, upsert(aws.ToString(s.Name), string(s.Type), time.Duration(aws.ToInt64(s.TTL))*time.Second, keep))
		}
	}
	return changes, deleted
}

var (
	_ libdns.RecordGetter   = (*Provider)(nil)
	_ libdns.RecordAppender = (*Provider)(nil)
	_ libdns.RecordSetter   = (*Provider)(nil)
	_ libdns.RecordDeleter  = (*Provider)(nil)
)
