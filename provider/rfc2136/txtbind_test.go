package rfc2136_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTXTStringsBIND: against a real BIND, a TXT written with several
// strings (a libdns.RR in presentation form) is stored with them and read
// back in the same form; a long libdns.TXT is split at 255 bytes and read
// back whole; what was read back deletes the records.
func TestTXTStringsBIND(t *testing.T) {
	s := testbind.Start(t, "example.test.")
	p := newProvider(t, s)
	ctx := context.Background()
	long := strings.Repeat("q", 600)
	in := []libdns.Record{
		libdns.RR{Name: "multi", Type: "TXT", Data: `"first" "second" "say \"hi\""`},
		libdns.TXT{Name: "long", Text: long},
		libdns.TXT{Name: "quote", Text: `"not" "strings"`},
	}
	_, err := p.AppendRecords(ctx, "example.test.", in)
	require.NoError(t, err)

	recs, err := p.GetRecords(ctx, "example.test.")
	require.NoError(t, err)
	var back []libdns.Record
	for _, r := range recs {
		if r.RR().Type == "TXT" {
			back = append(back, r)
		}
	}
	assert.ElementsMatch(t, []libdns.Record{
		libdns.RR{Name: "multi", Type: "TXT", TTL: back[0].RR().TTL, Data: `"first" "second" "say \"hi\""`},
		libdns.TXT{Name: "long", TTL: back[0].RR().TTL, Text: long},
		libdns.TXT{Name: "quote", TTL: back[0].RR().TTL, Text: `"not" "strings"`},
	}, back)

	// BIND's own answer holds the strings.
	q := new(dns.Msg)
	q.SetQuestion("multi.example.test.", dns.TypeTXT)
	c := &dns.Client{Net: "tcp"}
	a, _, err := c.Exchange(q, s.Addr)
	require.NoError(t, err)
	require.Len(t, a.Answer, 1)
	assert.Equal(t, []string{"first", "second", `say \"hi\"`}, a.Answer[0].(*dns.TXT).Txt)
	q.SetQuestion("long.example.test.", dns.TypeTXT)
	a, _, err = c.Exchange(q, s.Addr)
	require.NoError(t, err)
	require.Len(t, a.Answer, 1)
	assert.Len(t, a.Answer[0].(*dns.TXT).Txt, 3)

	deleted, err := p.DeleteRecords(ctx, "example.test.", back)
	require.NoError(t, err)
	assert.Len(t, deleted, 3)
	recs, err = p.GetRecords(ctx, "example.test.")
	require.NoError(t, err)
	for _, r := range recs {
		assert.NotEqual(t, "TXT", r.RR().Type, r.RR())
	}
}
