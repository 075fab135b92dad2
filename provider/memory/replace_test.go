package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record/replacetest"
)

// TestReplaceRecords runs the record.Replacer kit against the embedded
// zone: a switch between addresses and a CNAME, alone or beside other
// deletions and sets, and a Reconciler's switch, each one write that a
// reader never sees half done.
func TestReplaceRecords(t *testing.T) {
	replacetest.Run(t, "example.test.", func(context.Context) (replacetest.Store, error) {
		p := new(memory.Provider)
		return p, p.AddZone("example.test.")
	})
}

// TestReplaceRecordsIsOneVersion: the deletions and the sets of one call
// are one version of the store and one serial step, and a call the CNAME
// rules refuse changes nothing.
func TestReplaceRecordsIsOneVersion(t *testing.T) {
	ctx := context.Background()
	p := new(memory.Provider)
	require.NoError(t, p.AddZone("example.test."))
	_, err := p.SetRecords(ctx, "example.test.", []libdns.Record{addr("app", "192.0.2.1"), addr("app", "192.0.2.2")})
	require.NoError(t, err)
	v, soa := p.Version(), mustSOA(t, p)
	cname := libdns.CNAME{Name: "app", TTL: time.Minute, Target: "backup.example.net."}
	require.NoError(t, p.ReplaceRecords(ctx, "example.test.", []libdns.Record{addr("app", "192.0.2.1"), addr("app", "192.0.2.2")}, []libdns.Record{cname}))
	require.Equal(t, v+1, p.Version())
	require.Equal(t, soa+1, mustSOA(t, p))
	changes, ok := p.Changes(v)
	require.True(t, ok)
	for _, c := range changes {
		require.Equal(t, v+1, c.Version, "%+v", c)
	}
	// A CNAME beside other data at the end of the call: refused, nothing
	// changed.
	txt := libdns.TXT{Name: "app", TTL: time.Minute, Text: "x"}
	require.ErrorIs(t, p.ReplaceRecords(ctx, "example.test.", nil, []libdns.Record{txt}), memory.ErrCNAMEConflict)
	require.Equal(t, v+1, p.Version())
	// A cancelled context: nothing written.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, p.ReplaceRecords(cctx, "example.test.", []libdns.Record{cname}, []libdns.Record{addr("app", "192.0.2.3")}), context.Canceled)
	require.Equal(t, v+1, p.Version())
}

func mustSOA(t *testing.T, p *memory.Provider) uint32 {
	t.Helper()
	soa, err := p.SOA("example.test.")
	require.NoError(t, err)
	return soa.Serial
}
