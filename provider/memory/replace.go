package memory

import (
	"context"

	"github.com/libdns/libdns"
)

// ReplaceRecords implements record.Replacer: it deletes del (as
// DeleteRecords matches them) and sets set (as SetRecords does) in one
// change of the zone: one new version, one serial bump, and readers,
// replicas and IXFR see all of it or none. A record.Reconciler switching a
// name between addresses and a CNAME through it makes one write; made as
// two, the version between them held neither, and the name answered NODATA
// (or NXDOMAIN) to whoever asked then. The CNAME rules and the record checks
// of SetRecords apply; a failed one changes nothing.
func (p *Provider) ReplaceRecords(ctx context.Context, zoneName string, del, set []libdns.Record) error {
	return p.write(ctx, zoneName, func(t *txn) error {
		t.deleteRecords(del)
		_, err := t.setRecords(set)
		return err
	})
}
