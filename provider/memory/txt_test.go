package memory_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTXTStrings: a TXT's character-strings survive the libdns API and the
// wire; plain text is cut into 255-byte strings and read back whole.
func TestTXTStrings(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("x", 300)
	tests := []struct {
		name   string
		in     libdns.Record
		back   libdns.Record // what GetRecords returns
		onWire []string      // the strings in the answer
	}{
		{"several strings", libdns.RR{Name: "t", Type: "TXT", Data: `"first" "second" "third"`},
			libdns.RR{Name: "t", Type: "TXT", Data: `"first" "second" "third"`}, []string{"first", "second", "third"}},
		{"escapes", libdns.RR{Name: "t", Type: "TXT", Data: `"say \"hi\"" "back\\slash" "\001"`},
			libdns.RR{Name: "t", Type: "TXT", Data: `"say \"hi\"" "back\\slash" "\001"`}, []string{`say "hi"`, `back\slash`, "\x01"}},
		{"one quoted string is plain text", libdns.RR{Name: "t", Type: "TXT", Data: `"hello world"`},
			libdns.TXT{Name: "t", Text: "hello world"}, []string{"hello world"}},
		{"plain text", libdns.TXT{Name: "t", Text: `"quoted" text`},
			libdns.TXT{Name: "t", Text: `"quoted" text`}, []string{`"quoted" text`}},
		{"long text cut at 255", libdns.TXT{Name: "t", Text: long},
			libdns.TXT{Name: "t", Text: long}, []string{long[:255], long[255:]}},
		{"long quoted string cut at 255", libdns.RR{Name: "t", Type: "TXT", Data: `"` + long + `"`},
			libdns.TXT{Name: "t", Text: long}, []string{long[:255], long[255:]}},
		{"empty strings kept", libdns.RR{Name: "t", Type: "TXT", Data: `"a" ""`},
			libdns.RR{Name: "t", Type: "TXT", Data: `"a" ""`}, []string{"a", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := new(memory.Provider)
			require.NoError(t, p.AddZone("example.test."))
			_, err := p.AppendRecords(ctx, "example.test.", []libdns.Record{tc.in})
			require.NoError(t, err)
			recs, err := p.GetRecords(ctx, "example.test.")
			require.NoError(t, err)
			var got libdns.Record
			for _, r := range recs {
				if r.RR().Type == "TXT" {
					got = r
				}
			}
			assert.Equal(t, tc.back, got)

			m := new(dns.Msg)
			m.SetQuestion("t.example.test.", dns.TypeTXT)
			m.SetEdns0(1232, false)
			q, _ := m.Pack()
			r := new(dns.Msg)
			require.NoError(t, r.Unpack(p.RespondWire(q, netip.Addr{}, false)))
			require.Len(t, r.Answer, 1)
			var ss []string
			for _, s := range r.Answer[0].(*dns.TXT).Txt {
				ss = append(ss, unescape(s))
			}
			assert.Equal(t, tc.onWire, ss)

			// Written again as read back: the same record, no change.
			v := p.Version()
			_, err = p.SetRecords(ctx, "example.test.", []libdns.Record{got})
			require.NoError(t, err)
			assert.Equal(t, v, p.Version(), "setting the record read back changed the zone")
			// Deleted by the form read back.
			_, err = p.DeleteRecords(ctx, "example.test.", []libdns.Record{got})
			require.NoError(t, err)
			recs, _ = p.GetRecords(ctx, "example.test.")
			for _, r := range recs {
				assert.NotEqual(t, "TXT", r.RR().Type)
			}
		})
	}
}

// unescape reads miekg/dns's TXT string escapes.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
				b.WriteByte((s[i+1]-'0')*100 + (s[i+2]-'0')*10 + (s[i+3] - '0'))
				i += 3
				continue
			}
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
