package memory_test

import (
	"net/netip"
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnswerConfig: MaxUDPSize, FullANYOverUDP and NoAdditional change the
// answers as documented; out-of-range sizes are refused naming the field.
func TestAnswerConfig(t *testing.T) {
	mk := func(t *testing.T, f func(c *memory.Config)) *memory.Provider {
		c := memory.DefaultConfig()
		f(&c)
		p, err := memory.New(c)
		require.NoError(t, err)
		loadZone(t, p, "example.test.", diffZone+manyAddrs())
		return p
	}
	ask := func(t *testing.T, p *memory.Provider, q []byte) *dns.Msg {
		m := new(dns.Msg)
		require.NoError(t, m.Unpack(p.RespondUDP(q, make([]byte, 4096), netip.Addr{})))
		return m
	}
	t.Run("MaxUDPSize", func(t *testing.T) {
		q := mkQuery("txt.example.test.", dns.TypeTXT, 4096, false)
		p := mk(t, func(c *memory.Config) { c.MaxUDPSize = 4096 })
		m := ask(t, p, mkQuery("many.example.test.", dns.TypeA, 4096, false))
		assert.False(t, m.Truncated)
		assert.Len(t, m.Answer, 240)
		assert.Equal(t, uint16(4096), m.IsEdns0().UDPSize())
		p = mk(t, func(c *memory.Config) { c.MaxUDPSize = 512 })
		assert.False(t, ask(t, p, q).Truncated)
		assert.True(t, ask(t, p, mkQuery("long.example.test.", dns.TypeTXT, 4096, false)).Truncated)
		for _, bad := range []int{-1, 100, 511, 4097} {
			c := memory.DefaultConfig()
			c.MaxUDPSize = bad
			assert.ErrorContains(t, c.Validate(), "maxUDPSize", bad)
		}
	})
	t.Run("FullANYOverUDP", func(t *testing.T) {
		p := mk(t, func(c *memory.Config) { c.FullANYOverUDP = true })
		assert.Len(t, ask(t, p, mkQuery("www.example.test.", dns.TypeANY, 1232, false)).Answer, 3)
	})
	t.Run("NoAdditional", func(t *testing.T) {
		p := mk(t, func(c *memory.Config) {})
		q := mkQuery("mx2.example.test.", dns.TypeMX, 1232, false)
		assert.Len(t, ask(t, p, q).Extra, 6) // five addresses and the OPT
		p = mk(t, func(c *memory.Config) { c.NoAdditional = true })
		assert.Len(t, ask(t, p, q).Extra, 1)
		m := ask(t, p, mkQuery("host.sub.example.test.", dns.TypeA, 1232, false))
		assert.Len(t, m.Extra, 3, "glue in a referral is always sent")
	})
}
