package record

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/provider/rfc2136"
)

// poolDesired is the record service's provider output for app: a CNAME
// to its pool, and the pool's address set.
func poolDesired(zone string) Desired {
	return Desired{Sets: []RRSet{
		{Zone: zone, Name: "app", Type: "CNAME", TTL: 30 * time.Second, Values: []string{"app.pool." + zone}},
		{Zone: zone, Name: "app.pool", Type: "A", TTL: 30 * time.Second, Values: []string{"127.0.0.10", "127.0.0.11"}},
	}}
}

// checkHeldBack asserts the report of a CNAME held back by its foreign
// pool: the pool refused as not owned, the CNAME as a dependency, both
// in Conflicts and in the events.
func checkHeldBack(t *testing.T, r *Reconciler, rep Report, rec *recorder, zone string) {
	t.Helper()
	var dep *DependencyError
	var sawOwner, sawDep bool
	for _, ref := range rep.Changes.Refused {
		switch {
		case errors.As(ref.Err, &dep):
			sawDep = true
			assert.Equal(t, Key{Zone: zone, Name: "app", Type: "CNAME"}, dep.Key)
			assert.Equal(t, Key{Zone: zone, Name: "app.pool", Type: "A"}, dep.Needs)
			assert.ErrorIs(t, dep.Err, ErrNotOwned, "the cause: the pool's owner")
			assert.ErrorIs(t, ref.Err, ErrDependency)
		case errors.Is(ref.Err, ErrNotOwned):
			sawOwner = true
			assert.Equal(t, "app.pool", ref.Key.Name)
		}
	}
	assert.True(t, sawOwner && sawDep, "refused: %v", rep.Changes.Refused)
	assert.Len(t, r.Conflicts(), 2)
	var evDep bool
	for _, e := range eventsOf[RefusedEvent](rec) {
		evDep = evDep || errors.Is(e.Err, ErrDependency)
	}
	assert.True(t, evDep, "a RefusedEvent reports the held-back CNAME")
}

// TestDependencyForeignPoolMemory: a foreign record sits at the pool
// name. The pool is rightly refused; the CNAME into it must not be
// published either (it would answer the foreign address), and the old
// answer — here the CNAME to the failover name — stays.
func TestDependencyForeignPoolMemory(t *testing.T) {
	ctx := context.Background()
	const zone = "example.com."
	m := newMemory(t, zone)
	rec := &recorder{}
	r, err := New(m, localConfig(), Options{Observer: rec})
	require.NoError(t, err)
	_, err = r.Apply(ctx, Desired{Sets: []RRSet{{Zone: zone, Name: "app", Type: "CNAME", TTL: 30 * time.Second, Values: []string{"app.backup.example.net."}}}})
	require.NoError(t, err)
	_, err = m.SetRecords(ctx, zone, []libdns.Record{libdns.Address{Name: "app.pool", TTL: time.Minute, IP: netip.MustParseAddr("203.0.113.66")}})
	require.NoError(t, err)

	rep, err := r.Apply(ctx, poolDesired(zone))
	require.NoError(t, err)
	checkHeldBack(t, r, rep, rec, zone)
	assert.Equal(t, []string{"_gslb-owner.app TXT dep-1", "app CNAME app.backup.example.net.", "app.pool A 203.0.113.66"},
		readZone(t, m, zone), "the old answer stays; the foreign pool is untouched")

	// Once the foreign record is gone, both are published, pool first.
	_, err = m.DeleteRecords(ctx, zone, []libdns.Record{libdns.RR{Name: "app.pool", Type: "A", Data: "203.0.113.66"}})
	require.NoError(t, err)
	rep, err = r.ReconcileOnce(ctx)
	require.NoError(t, err)
	assert.Empty(t, r.Conflicts())
	assert.Contains(t, readZone(t, m, zone), "app CNAME app.pool.example.com.")
	steps := rep.Changes.Zones[0].Steps(false)
	require.NotEmpty(t, steps)
	assert.True(t, steps[len(steps)-1].Dependents, "the CNAME is set after its pool")
}

// partial applies a batch except the records at one name, then fails:
// a provider whose batch landed in part.
type partial struct {
	ZoneEditor
	at string
}

func (p *partial) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	var some []libdns.Record
	hit := false
	for _, r := range recs {
		if r.RR().Name == p.at {
			hit = true
			continue
		}
		some = append(some, r)
	}
	if !hit {
		return p.ZoneEditor.SetRecords(ctx, zone, recs)
	}
	if len(some) > 0 {
		if _, err := p.ZoneEditor.SetRecords(ctx, zone, some); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("partial: the pool's records failed")
}

// TestDependencyFailedPoolWrite: the pool's write fails while the rest of
// the batch lands. The CNAME must not land without its pool.
func TestDependencyFailedPoolWrite(t *testing.T) {
	ctx := context.Background()
	const zone = "example.com."
	m := newMemory(t, zone)
	rec := &recorder{}
	r, err := New(&partial{ZoneEditor: m, at: "app.pool"}, localConfig(), Options{Observer: rec})
	require.NoError(t, err)
	_, err = r.Apply(ctx, poolDesired(zone))
	require.Error(t, err)
	for _, line := range readZone(t, m, zone) {
		assert.False(t, strings.HasPrefix(line, "app CNAME"), "CNAME published without its pool: %v", readZone(t, m, zone))
	}
	var dep *DependencyError
	require.NotEmpty(t, r.Conflicts())
	require.ErrorAs(t, r.Conflicts()[0].Err, &dep)
	assert.Equal(t, "app", dep.Key.Name)
	assert.Error(t, dep.Err, "the cause is the pool's failed write")
	assert.True(t, r.Pending())
}

// TestDependencyNeedsDeclared: an explicit Needs on a name that is
// neither desired nor published holds the set back.
func TestDependencyNeedsDeclared(t *testing.T) {
	const zone = "example.com."
	d := Desired{Sets: []RRSet{{Zone: zone, Name: "www", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.1"},
		Needs: []Key{{Zone: zone, Name: "db", Type: "A"}}}}}
	ch, err := Plan(d, []Zone{{Name: zone}}, localConfig())
	require.NoError(t, err)
	require.Len(t, ch.Refused, 1)
	assert.ErrorIs(t, ch.Refused[0].Err, ErrDependency)
	assert.True(t, ch.Empty(), "%s", ch)
	d.Sets[0].Needs[0].Type = "NOPE!"
	assert.ErrorIs(t, d.Validate(), ErrInvalid)
}

// TestDependencyForeignPoolBIND is the same case against a real BIND 9
// zone holding a foreign pool record: BIND answers the old CNAME, never
// one into the foreign pool.
func TestDependencyForeignPoolBIND(t *testing.T) {
	srv := testbind.Start(t, "example.test.")
	p, err := rfc2136.New(rfc2136.Config{Server: srv.Addr, KeyName: srv.KeyName, KeyAlg: srv.KeyAlg, Secret: srv.Secret,
		Timeout: 10 * time.Second})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	zone := srv.Zone
	rec := &recorder{}
	r, err := New(p, LocalConfig("dep-bind"), Options{Observer: rec})
	require.NoError(t, err)
	_, err = r.Apply(ctx, Desired{Sets: []RRSet{{Zone: zone, Name: "app", Type: "CNAME", TTL: 30 * time.Second, Values: []string{"app.backup.example.net."}}}})
	require.NoError(t, err)
	_, err = p.SetRecords(ctx, zone, []libdns.Record{libdns.Address{Name: "app.pool", TTL: time.Minute, IP: netip.MustParseAddr("127.0.0.66")}})
	require.NoError(t, err)

	rep, err := r.Apply(ctx, poolDesired(zone))
	require.NoError(t, err)
	checkHeldBack(t, r, rep, rec, zone)
	got, _ := ask(t, srv.Addr, "app."+zone, dns.TypeCNAME)
	assert.Equal(t, []string{"app.backup.example.net."}, got, "the old answer stays")
	got, _ = ask(t, srv.Addr, "app.pool."+zone, dns.TypeA)
	assert.Equal(t, []string{"127.0.0.66"}, got, "the foreign pool is untouched")
}
