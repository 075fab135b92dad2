package memory

import (
	"context"
	"errors"
	"fmt"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// ErrFenced is matched (errors.Is) by the error of a ReplaceFenced call
// whose fence record did not hold the expected value; the zone is
// unchanged. The error also answers Fenced() true, which is how
// record.Reconciler recognises it.
var ErrFenced = errors.New("memory: fence record does not hold the expected value")

// fencedError is ReplaceFenced's refusal.
type fencedError struct {
	zone, name, want string
	got              []string
}

// Error names the fence, what was expected and what it holds.
func (e *fencedError) Error() string {
	want := fmt.Sprintf("%q", e.want)
	if e.want == "" {
		want = "no TXT record"
	}
	return fmt.Sprintf("memory: zone %s: fence %s TXT holds %q, expected %s", e.zone, e.name, e.got, want)
}

// Unwrap returns ErrFenced.
func (e *fencedError) Unwrap() error { return ErrFenced }

// Fenced is true: the write was refused by its fence.
func (e *fencedError) Fenced() bool { return true }

// Temporary is false: retrying does not lift a fence.
func (e *fencedError) Temporary() bool { return false }

// Throttled is false.
func (e *fencedError) Throttled() bool { return false }

// ReplaceFenced implements record.Fencer: a compare-and-set write. Under
// the writers' lock, if the TXT RRset at was.Name holds exactly the one
// text was.Text (was.Text empty: no TXT at the name), it deletes del (as
// DeleteRecords matches them), sets set (as SetRecords does) and replaces
// that TXT RRset by now, all in one change of the zone: one new version,
// one serial bump, and readers see all of it or none. Otherwise it changes
// nothing and returns an error matching ErrFenced (it answers Fenced()
// true). was and now must name the same record; the CNAME rules and the
// record checks of SetRecords apply, and a failed one changes nothing.
func (p *Provider) ReplaceFenced(ctx context.Context, zoneName string, was, now libdns.TXT, del, set []libdns.Record) error {
	return p.write(ctx, zoneName, func(t *txn) error {
		name, next, err := makeRec(t.z.Name, now)
		if err != nil {
			return err
		}
		var want rec
		if was.Text != "" {
			var wname string
			if wname, want, err = makeRec(t.z.Name, was); err != nil {
				return err
			}
			if wname != name {
				return recErr(t.z.Name, name, "TXT", fmt.Errorf("%w: fence was %s, now %s: not one name", ErrInvalidRecord, wname, name))
			}
		}
		cur := t.get(name, dns.TypeTXT)
		if held := len(cur) == 1 && was.Text != "" && cur[0].SameData(want); !held && !(len(cur) == 0 && was.Text == "") {
			got := make([]string, len(cur))
			for i, r := range cur {
				got[i] = r.Data()
			}
			return &fencedError{zone: t.z.Name, name: name, want: was.Text, got: got}
		}
		t.deleteRecords(del)
		if _, err := t.setRecords(set); err != nil {
			return err
		}
		t.put(name, dns.TypeTXT, []rec{next})
		return nil
	})
}
