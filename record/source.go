package record

import (
	"maps"
	"slices"
	"strings"

	"github.com/libdns/libdns"
)

// Source is a desired state built by another package, read through plain
// libdns values so that neither package imports the other: the failover
// package's Desired (and the result of its WrittenBy) satisfies it. A view
// names one private copy of a split-horizon zone ("" is the shared one):
// a caller whose providers hold different views builds one Desired per
// provider with FromSource.
type Source interface {
	// Records returns, by zone (fully qualified), the records to publish in
	// view: libdns values whose names are relative to the zone, each
	// name and type forming one RRset with one TTL.
	Records(view string) map[string][]libdns.Record
	// Withdrawals returns, by zone, what to remove in view: libdns.RR
	// values naming an RRset (Name relative to the zone, Type; an empty
	// Type means every type at the name) with no Data.
	Withdrawals(view string) map[string][]libdns.RR
}

// FromSource returns the Desired state of src in the given views (none:
// the shared view "" alone): one RRSet per zone, name and type of its
// records (values in the order given, the TTL of the set's first record)
// and one withdraw per withdrawal. Give several views only when one
// provider holds them all (each view's zones distinct). It keeps
// withdrawals and never invents sets, so the never-empty rule holds as src
// states it.
func FromSource(src Source, views ...string) Desired {
	if len(views) == 0 {
		views = []string{""}
	}
	var d Desired
	for _, v := range views {
		d.Sets, d.Withdraw = fromView(src, v, d.Sets, d.Withdraw)
	}
	return d
}

func fromView(src Source, view string, sets []RRSet, withdraw []Key) ([]RRSet, []Key) {
	d := Desired{Sets: sets, Withdraw: withdraw}
	recs := src.Records(view)
	for _, z := range slices.Sorted(maps.Keys(recs)) {
		at := map[Key]int{}
		for _, r := range recs[z] {
			rr := r.RR()
			k := Key{Zone: z, Name: rr.Name, Type: strings.ToUpper(rr.Type)}
			i, ok := at[k]
			if !ok {
				i = len(d.Sets)
				at[k] = i
				d.Sets = append(d.Sets, RRSet{Zone: z, Name: rr.Name, Type: k.Type, TTL: rr.TTL})
			}
			d.Sets[i].Values = append(d.Sets[i].Values, rr.Data)
		}
	}
	wd := src.Withdrawals(view)
	for _, z := range slices.Sorted(maps.Keys(wd)) {
		for _, rr := range wd[z] {
			d.Withdraw = append(d.Withdraw, Key{Zone: z, Name: rr.Name, Type: rr.Type})
		}
	}
	return d.Sets, d.Withdraw
}
