package route53

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/libdns/libdns"
)

// ErrFenced is matched (errors.Is) by the error of a ReplaceFenced call
// refused because the fence did not hold the expected value; the error
// also answers Fenced() true, which is how record.Reconciler recognises
// it.
var ErrFenced = errors.New("route53: fence record does not hold the expected value")

// fencedError is a change batch refused because of its fence.
type fencedError struct{ err error }

func (e *fencedError) Error() string {
	return e.err.Error() + " (the fence does not hold the expected value)"
}
func (e *fencedError) Unwrap() []error { return []error{ErrFenced, e.err} }

// Fenced is true: the batch was refused by its fence.
func (e *fencedError) Fenced() bool { return true }

// ReplaceFenced implements record.Fencer with one change batch, which
// Route 53 validates whole and applies all or nothing
// (ChangeResourceRecordSets). The batch DELETEs the fence's TXT RRset
// exactly as expected — name, type, TTL (was.TTL) and the one value
// was.Text — and CREATEs it anew as now, before the other changes: Route
// 53 refuses a DELETE that does not match the current RRset exactly, so
// the whole batch is refused (InvalidChangeBatch) once another writer has
// replaced the fence. With was.Text empty the batch only CREATEs the fence,
// which Route 53 refuses when it exists. was and now should differ
// (record.Reconciler's do: its fence counts writes): moto, for one,
// refuses a batch that DELETEs and CREATEs the same RRset unchanged. The other changes are those of
// DeleteRecords for del (an RRset losing all its records is DELETEd, one
// losing some UPSERTed with the rest; this reads the zone first) and of
// SetRecords for set (an UPSERT per RRset). When the batch is refused
// with an error that is not worth retrying (InvalidChangeBatch; moto
// answers a DELETE that does not match with InvalidInput), the zone's
// fence is read again: if it does not hold was, the
// error matches ErrFenced and answers Fenced() true; otherwise it is the
// batch's own error (a CNAME beside other data, …).
func (p *Provider) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	return p.replace(ctx, zone, &[2]libdns.TXT{was, now}, del, set)
}

// ReplaceRecords implements record.Replacer with one change batch, which
// Route 53 validates whole and applies all or nothing: the changes of
// DeleteRecords for del (this reads the zone first) and an UPSERT per
// RRset of set, so a name switches between a CNAME and addresses without a
// moment in which it has neither. An RRset both in del and in set is only
// UPSERTed (set replaces it whole).
func (p *Provider) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	return p.replace(ctx, zone, nil, del, set)
}

// replace sends one change batch deleting del and upserting the RRsets of
// set; with fence (was, now) the batch first replaces the fence, and a
// refusal is told from a fence that moved.
func (p *Provider) replace(ctx context.Context, zone string, fence *[2]libdns.TXT, del, set []libdns.Record) error {
	z, c, id, err := p.prepare(ctx, zone)
	if err != nil {
		return err
	}
	op := "ReplaceRecords"
	var changes []types.Change
	if fence != nil {
		op = "ReplaceFenced"
		was, now := fence[0], fence[1]
		if zoneops.KeyOf(was, z).Name != zoneops.KeyOf(now, z).Name && was.Text != "" {
			return fmt.Errorf("route53: ReplaceFenced: fence was %s, now %s: not one name", was.Name, now.Name)
		}
		fenceName := libdns.AbsoluteName(zoneops.KeyOf(now, z).Name, z)
		nowV, err := encodeValue(now)
		if err != nil {
			return err
		}
		if was.Text != "" {
			wasV, err := encodeValue(was)
			if err != nil {
				return err
			}
			changes = append(changes, types.Change{Action: types.ChangeActionDelete, ResourceRecordSet: rrsetOf(fenceName, "TXT", was.TTL, []string{wasV})})
		}
		changes = append(changes, types.Change{Action: types.ChangeActionCreate, ResourceRecordSet: rrsetOf(fenceName, "TXT", now.TTL, []string{nowV})})
	}
	gs, err := groups(set, z)
	if err != nil {
		return err
	}
	p.rmw.Lock()
	defer p.rmw.Unlock()
	if len(del) > 0 {
		sets, err := p.list(ctx, c, z, id)
		if err != nil {
			return err
		}
		upserted := map[zoneops.RRset]bool{}
		for _, g := range gs {
			upserted[g.set] = true
		}
		dels, _ := deletions(sets, del, z)
		for _, d := range dels {
			rs := d.ResourceRecordSet
			k := zoneops.RRset{Name: zoneops.Name(decodeName(aws.ToString(rs.Name)), z), Type: string(rs.Type)}
			if !upserted[k] {
				changes = append(changes, d)
			}
		}
	}
	for _, g := range gs {
		values := make([]string, 0, len(g.recs))
		for _, r := range g.recs {
			v, err := encodeValue(r)
			if err != nil {
				return err
			}
			values = append(values, v)
		}
		changes = append(changes, upsert(g.name, g.set.Type, g.recs[0].RR().TTL, values))
	}
	if len(changes) == 0 {
		return nil
	}
	err = p.apply(ctx, c, op, z, id, changes)
	if fence == nil || err == nil || errclass.Of(err).Retryable() || ctx.Err() != nil {
		return err
	}
	sets, lerr := p.list(ctx, c, z, id)
	if lerr != nil {
		return errors.Join(err, lerr)
	}
	if !fenceHolds(sets, zoneops.KeyOf(fence[1], z).Name, fence[0], z) {
		return &fencedError{err: err}
	}
	return err
}

// fenceHolds reports whether the TXT RRset at name is exactly was (none
// when was.Text is empty).
func fenceHolds(sets []types.ResourceRecordSet, name string, was libdns.TXT, zone string) bool {
	for _, s := range sets {
		if s.Type != types.RRTypeTxt || zoneops.Name(decodeName(aws.ToString(s.Name)), zone) != name {
			continue
		}
		recs := fromSet(s, zone)
		return was.Text != "" && len(recs) == 1 && recs[0].RR().Data == was.Text &&
			time.Duration(aws.ToInt64(s.TTL))*time.Second == was.TTL.Truncate(time.Second)
	}
	return was.Text == ""
}
