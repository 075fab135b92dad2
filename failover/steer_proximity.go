package failover

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
)

// LatLon is a point on the globe in degrees: Lat north (−90 to 90), Lon
// east (−180 to 180).
type LatLon struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

// earthRadiusKm is the mean radius of the Earth (IUGG), in kilometres.
const earthRadiusKm = 6371.0088

// DistanceKm returns the great-circle distance between p and q in
// kilometres (the haversine formula on a sphere of the Earth's mean
// radius).
func DistanceKm(p, q LatLon) float64 {
	rad := math.Pi / 180
	dLat, dLon := (q.Lat-p.Lat)*rad, (q.Lon-p.Lon)*rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(p.Lat*rad)*math.Cos(q.Lat*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadiusKm * math.Asin(math.Sqrt(min(h, 1)))
}

// BiasedDistance is the distance Proximity compares: d × (1 − bias/100),
// Route 53 geoproximity's rule. A positive bias (up to 99) shrinks the
// pool's distances, so it draws clients from farther away (its area
// expands); a negative one (down to −99) stretches them (its area
// shrinks); 0 leaves them as they are.
func BiasedDistance(d float64, bias int) float64 { return d * (1 - float64(bias)/100) }

// Proximity returns an AnswerFunc that answers the addresses of the pool
// (region) nearest the client by great-circle distance after bias:
// g.Prefixes and g.Default place the client in a region, g.Coordinates
// places that region and every pool region on the globe, and the pools
// are ranked by BiasedDistance from the client's region; the nearest one
// with addresses among rrs wins (the client's own region first when it is
// a pool: its distance is 0). tags gives each address's regions, as for
// Geo; bias maps a pool region to −99..99 (absent: 0). g.Preferences is
// ignored: the distances order the pools. A client the map does not place,
// or no pool among rrs: no opinion.
//
// Every region g places clients in and every region of tags needs
// coordinates, and bias may name only regions of tags: otherwise an error
// naming the field. The answer and its scope are those of Geo over the
// ranking (the locator's scope: the network around the client inside which
// every client is placed alike); no allocation per query.
func Proximity(g GeoMap, tags map[netip.Addr][]string, bias map[string]int) (AnswerFunc, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	pools := map[string]bool{}
	for _, rs := range tags {
		for _, r := range rs {
			pools[r] = true
		}
	}
	for _, r := range slices.Sorted(maps.Keys(pools)) {
		if _, ok := g.Coordinates[r]; !ok {
			return nil, configErr(fmt.Sprintf("coordinates[%s]", r), "", "coordinates for every pool region (lat, lon)")
		}
	}
	for _, r := range slices.Sorted(maps.Keys(bias)) {
		if !pools[r] {
			return nil, configErr(fmt.Sprintf("bias[%s]", r), bias[r], "a pool region some address is tagged with")
		}
		if b := bias[r]; b < -99 || b > 99 {
			return nil, configErr(fmt.Sprintf("bias[%s]", r), b, "[-99, 99]")
		}
	}
	placed := map[string]bool{}
	for _, r := range g.Prefixes {
		placed[r] = true
	}
	if g.Default != "" {
		placed[g.Default] = true
	}
	order := slices.Sorted(maps.Keys(pools))
	d := GeoMap{Prefixes: g.Prefixes, Default: g.Default, Preferences: map[string][]string{}}
	for _, r := range slices.Sorted(maps.Keys(placed)) {
		at, ok := g.Coordinates[r]
		if !ok {
			return nil, configErr(fmt.Sprintf("coordinates[%s]", r), "", "coordinates for every region clients are placed in (lat, lon)")
		}
		ranked := slices.Clone(order)
		dist := func(p string) float64 { return BiasedDistance(DistanceKm(at, g.Coordinates[p]), bias[p]) }
		slices.SortStableFunc(ranked, func(a, b string) int { return cmp.Compare(dist(a), dist(b)) })
		if len(ranked) > 0 {
			d.Preferences[r] = ranked
		}
	}
	loc, err := NewLocator(d)
	if err != nil {
		return nil, err
	}
	tm := make(map[netip.Addr][]string, len(tags))
	for a, rs := range tags {
		tm[a.Unmap()] = append([]string(nil), rs...)
	}
	return geoTagged(loc, tm, false, true), nil
}
