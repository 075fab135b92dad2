package failover

import (
	"net/netip"

	"github.com/libdns/libdns"
)

// poolKeys tells which pool an address belongs to for the steps fed by the
// program (Latency, LoadShed): with a pools map, the pool it names; without
// one, every address is its own pool, named by its text ("192.0.2.1").
type poolKeys struct {
	byName bool
	t      addrTable[string]
}

func newPoolKeys(pools map[netip.Addr]string) poolKeys {
	if pools == nil {
		return poolKeys{}
	}
	m := make(map[netip.Addr]string, len(pools))
	for a, p := range pools {
		m[a.Unmap()] = p
	}
	return poolKeys{byName: true, t: newAddrTable(m)}
}

// poolValues is a program-fed value per pool, read lock-free: by name,
// and, for names that are addresses, by address (so a query with no pools
// map looks an address up without formatting it).
type poolValues[V any] struct {
	byName map[string]V
	byAddr map[netip.Addr]V
}

func newPoolValues[V any](m map[string]V) poolValues[V] {
	pv := poolValues[V]{byName: make(map[string]V, len(m)), byAddr: map[netip.Addr]V{}}
	for k, v := range m {
		pv.byName[k] = v
		if a, err := netip.ParseAddr(k); err == nil {
			pv.byAddr[a.Unmap()] = v
		}
	}
	return pv
}

// of returns the value of r's pool and the pool's name when keyed by name
// ("" for an address's own pool); ok is false for a record that is not an
// address, or whose pool has no value.
func (pv *poolValues[V]) of(k *poolKeys, r libdns.Record) (v V, a netip.Addr, pool string, ok bool) {
	a, isAddr := addrOf(r)
	if !isAddr {
		return v, a, "", false
	}
	if k.byName {
		pool = k.t.get(a)
		if pool == "" {
			return v, a, "", false
		}
		v, ok = pv.byName[pool]
		return v, a, pool, ok
	}
	v, ok = pv.byAddr[a]
	return v, a, "", ok
}

// inPool reports whether r belongs to the pool named pool (by name), or is
// the address a (without a pools map).
func (k *poolKeys) inPool(r libdns.Record, pool string, a netip.Addr) bool {
	x, ok := addrOf(r)
	if !ok {
		return false
	}
	if k.byName {
		return k.t.get(x) == pool
	}
	return x == a
}
