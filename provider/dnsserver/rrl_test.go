package dnsserver_test

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newRRL(t *testing.T, cfg dnsserver.RRLConfig) *dnsserver.RateLimiter {
	t.Helper()
	l, err := dnsserver.NewRateLimiter(cfg)
	require.NoError(t, err)
	require.NotNil(t, l)
	return l
}

// count sends n responses at now and tallies the actions.
func count(l *dnsserver.RateLimiter, now time.Time, src string, class dnsserver.RRLClass, name string, n int) map[dnsserver.RRLAction]int {
	out := map[dnsserver.RRLAction]int{}
	a := netip.MustParseAddr(src)
	for i := 0; i < n; i++ {
		out[l.Check(now, a, class, []byte(name))]++
	}
	return out
}

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func TestRRLBurstThenRate(t *testing.T) {
	cfg := dnsserver.DefaultRRLConfig()
	cfg.Rate, cfg.Slip = 10, 2
	l := newRRL(t, cfg)

	// A new bucket holds four seconds' worth: 40 responses, then limited.
	got := count(l, t0, "192.0.2.7", dnsserver.RRLPositive, "www.example.", 60)
	assert.Equal(t, 40, got[dnsserver.RRLSend])
	assert.Equal(t, 10, got[dnsserver.RRLSlip], "every 2nd limited response slips")
	assert.Equal(t, 10, got[dnsserver.RRLDrop])

	// Within the same second nothing refills.
	got = count(l, t0.Add(999*time.Millisecond), "192.0.2.7", dnsserver.RRLPositive, "www.example.", 4)
	assert.Zero(t, got[dnsserver.RRLSend])

	// One second later: Rate more tokens.
	got = count(l, t0.Add(time.Second), "192.0.2.7", dnsserver.RRLPositive, "www.example.", 30)
	assert.Equal(t, 10, got[dnsserver.RRLSend])

	// A long pause refills to capacity, not beyond.
	got = count(l, t0.Add(time.Hour), "192.0.2.7", dnsserver.RRLPositive, "www.example.", 100)
	assert.Equal(t, 40, got[dnsserver.RRLSend])

	st := l.Stats()
	assert.Equal(t, uint64(90), st.Sent)
	assert.Equal(t, st.Sent+st.Dropped+st.Slipped, uint64(60+4+30+100))
}

func TestRRLBucketsAreSeparate(t *testing.T) {
	cfg := dnsserver.DefaultRRLConfig()
	cfg.Rate = 5
	l := newRRL(t, cfg)
	exhaust := func(src string, class dnsserver.RRLClass, name string) {
		count(l, t0, src, class, name, 20)
	}
	exhaust("198.51.100.1", dnsserver.RRLPositive, "a.example.")

	cases := []struct {
		name  string
		src   string
		class dnsserver.RRLClass
		qname string
		limit bool
	}{
		{"same /24", "198.51.100.200", dnsserver.RRLPositive, "a.example.", true},
		{"same name, other case", "198.51.100.9", dnsserver.RRLPositive, "A.EXAMPLE.", true},
		{"other /24", "198.51.101.1", dnsserver.RRLPositive, "a.example.", false},
		{"other name", "198.51.100.1", dnsserver.RRLPositive, "b.example.", false},
		{"other class", "198.51.100.1", dnsserver.RRLEmpty, "a.example.", false},
		{"mapped IPv4 is IPv4", "::ffff:198.51.100.3", dnsserver.RRLPositive, "a.example.", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			act := l.Check(t0, netip.MustParseAddr(tc.src), tc.class, []byte(tc.qname))
			if tc.limit {
				assert.NotEqual(t, dnsserver.RRLSend, act)
			} else {
				assert.Equal(t, dnsserver.RRLSend, act)
			}
		})
	}
}

func TestRRLIPv6Netblocks(t *testing.T) {
	cfg := dnsserver.DefaultRRLConfig()
	cfg.Rate = 3
	l := newRRL(t, cfg)
	count(l, t0, "2001:db8:aa:bb00::1", dnsserver.RRLNXDomain, "example.", 12)

	for _, tc := range []struct {
		src   string
		limit bool
	}{
		{"2001:db8:aa:bbff:ffff::1", true}, // same /56
		{"2001:db8:aa:bb01:1234::9", true}, // same /56
		{"2001:db8:aa:bc00::1", false},     // next /56
		{"2001:db8:ab:bb00::1", false},     // another /48
		{"2001:db8:aa:bb00::1%eth0", true}, // zone ignored? no: parsed with zone
	} {
		a := netip.MustParseAddr(tc.src).WithZone("")
		act := l.Check(t0, a, dnsserver.RRLNXDomain, []byte("example."))
		if tc.limit {
			assert.NotEqual(t, dnsserver.RRLSend, act, tc.src)
		} else {
			assert.Equal(t, dnsserver.RRLSend, act, tc.src)
		}
	}

	// A /64 grouping keeps the /56's neighbours apart.
	cfg.IPv6Prefix = 64
	l = newRRL(t, cfg)
	count(l, t0, "2001:db8:aa:bb00::1", dnsserver.RRLNXDomain, "example.", 12)
	assert.Equal(t, dnsserver.RRLSend, l.Check(t0, netip.MustParseAddr("2001:db8:aa:bb01::1"), dnsserver.RRLNXDomain, []byte("example.")))
	assert.NotEqual(t, dnsserver.RRLSend, l.Check(t0, netip.MustParseAddr("2001:db8:aa:bb00:ffff::1"), dnsserver.RRLNXDomain, []byte("example.")))
}

func TestRRLSlipEveryNth(t *testing.T) {
	for _, slip := range []int{1, 2, 3, 10} {
		cfg := dnsserver.DefaultRRLConfig()
		cfg.Rate, cfg.Slip = 1, slip
		l := newRRL(t, cfg)
		count(l, t0, "203.0.113.5", dnsserver.RRLPositive, "x.", 4) // drain the burst
		got := count(l, t0, "203.0.113.5", dnsserver.RRLPositive, "x.", 30*slip)
		assert.Equal(t, 30, got[dnsserver.RRLSlip], "slip %d", slip)
		assert.Equal(t, 30*slip-30, got[dnsserver.RRLDrop], "slip %d", slip)
	}
}

func TestRRLExempt(t *testing.T) {
	cfg := dnsserver.DefaultRRLConfig()
	cfg.Rate = 1
	cfg.Exempt = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}
	l := newRRL(t, cfg)
	assert.Equal(t, 50, count(l, t0, "10.1.2.3", dnsserver.RRLPositive, "x.", 50)[dnsserver.RRLSend])
	assert.Equal(t, 50, count(l, t0, "2001:db8::1", dnsserver.RRLPositive, "x.", 50)[dnsserver.RRLSend])
	assert.Equal(t, 4, count(l, t0, "11.1.2.3", dnsserver.RRLPositive, "x.", 50)[dnsserver.RRLSend])
}

func TestRRLClockBackwards(t *testing.T) {
	cfg := dnsserver.DefaultRRLConfig()
	cfg.Rate = 2
	l := newRRL(t, cfg)
	count(l, t0, "192.0.2.1", dnsserver.RRLPositive, "x.", 8)
	// Going back in time adds no tokens.
	assert.Zero(t, count(l, t0.Add(-time.Hour), "192.0.2.1", dnsserver.RRLPositive, "x.", 3)[dnsserver.RRLSend])
}

func TestRRLFullTableTakesOver(t *testing.T) {
	cfg := dnsserver.DefaultRRLConfig()
	cfg.Rate, cfg.TableSize = 2, 1024
	l := newRRL(t, cfg)
	// Far more live keys than buckets within one second: a colliding key
	// takes an active bucket over in slow start, and keys colliding with a
	// bucket in slow start share its tokens (Knot's rule), so a table too
	// small for its load limits more than it should, but never panics and
	// sends at least one burst per group of buckets.
	sent := 0
	for i := 0; i < 20000; i++ {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 1})
		if l.Check(t0, a, dnsserver.RRLPositive, []byte("x.")) == dnsserver.RRLSend {
			sent++
		}
	}
	assert.GreaterOrEqual(t, sent, 1024/4*3)
	assert.Less(t, sent, 20000)
	t.Logf("sent %d of 20000 with 1024 buckets", sent)
}

func TestRRLNil(t *testing.T) {
	l, err := dnsserver.NewRateLimiter(dnsserver.DefaultRRLConfig())
	require.NoError(t, err)
	require.Nil(t, l, "Rate 0 is off")
	assert.Equal(t, dnsserver.RRLSend, l.Check(t0, netip.MustParseAddr("192.0.2.1"), dnsserver.RRLPositive, nil))
	assert.Equal(t, dnsserver.RRLStats{}, l.Stats())
	var zero dnsserver.RRLConfig
	require.NoError(t, zero.Validate(), "a zero config is valid and off")
}

func TestRRLConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		field string
		set   func(*dnsserver.RRLConfig)
	}{
		{"rate", func(c *dnsserver.RRLConfig) { c.Rate = -1 }},
		{"rate", func(c *dnsserver.RRLConfig) { c.Rate = 1_000_001 }},
		{"slip", func(c *dnsserver.RRLConfig) { c.Slip = 101 }},
		{"slip", func(c *dnsserver.RRLConfig) { c.Slip = -1 }},
		{"tableSize", func(c *dnsserver.RRLConfig) { c.TableSize = 10 }},
		{"ipv4Prefix", func(c *dnsserver.RRLConfig) { c.IPv4Prefix = 33 }},
		{"ipv6Prefix", func(c *dnsserver.RRLConfig) { c.IPv6Prefix = 16 }},
		{"exempt[0]", func(c *dnsserver.RRLConfig) { c.Exempt = []netip.Prefix{{}} }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			c := dnsserver.DefaultRRLConfig()
			c.Rate = 10
			tc.set(&c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
			_, err = dnsserver.NewRateLimiter(c)
			require.Error(t, err)
		})
	}
}

func TestClassifyResponse(t *testing.T) {
	for _, tc := range []struct {
		name          string
		rcode         int
		qtype         uint16
		answers, size int
		wildcard      bool
		want          dnsserver.RRLClass
	}{
		{"positive", 0, 1, 1, 60, false, dnsserver.RRLPositive},
		{"nodata", 0, 28, 0, 90, false, dnsserver.RRLEmpty},
		{"nxdomain", 3, 1, 0, 90, false, dnsserver.RRLNXDomain},
		{"refused", 5, 1, 0, 30, false, dnsserver.RRLError},
		{"servfail over wildcard", 2, 1, 0, 30, true, dnsserver.RRLError},
		{"wildcard", 0, 1, 1, 60, true, dnsserver.RRLWildcard},
		{"any", 0, 255, 3, 200, false, dnsserver.RRLAny},
		{"dnskey", 0, 48, 2, 600, false, dnsserver.RRLDNSSEC},
		{"ds", 0, 43, 0, 100, false, dnsserver.RRLDNSSEC},
		{"large", 0, 1, 60, 1024, false, dnsserver.RRLLarge},
		{"just under large", 0, 1, 60, 1023, false, dnsserver.RRLPositive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, dnsserver.ClassifyResponse(tc.rcode, tc.qtype, tc.answers, tc.size, tc.wildcard))
		})
	}
	assert.Equal(t, "nxdomain", dnsserver.RRLNXDomain.String())
	assert.Equal(t, "slip", dnsserver.RRLSlip.String())
}

func TestRRLNoAllocs(t *testing.T) {
	cfg := dnsserver.DefaultRRLConfig()
	cfg.Rate = 100
	l := newRRL(t, cfg)
	v4 := netip.MustParseAddr("192.0.2.55")
	v6 := netip.MustParseAddr("2001:db8::55")
	name := []byte("\x03www\x07example\x03com\x00")
	allocs := testing.AllocsPerRun(1000, func() {
		l.Check(t0, v4, dnsserver.RRLPositive, name)
		l.Check(t0, v6, dnsserver.RRLNXDomain, name)
	})
	assert.Zero(t, allocs)
}

func TestRRLConcurrent(t *testing.T) {
	cfg := dnsserver.DefaultRRLConfig()
	cfg.Rate, cfg.TableSize = 50, 1024
	l := newRRL(t, cfg)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				a := netip.AddrFrom4([4]byte{192, 0, byte(i % 7), 1})
				l.Check(t0, a, dnsserver.RRLPositive, []byte("same.example."))
			}
		}()
	}
	wg.Wait()
	st := l.Stats()
	assert.Equal(t, uint64(16000), st.Sent+st.Dropped+st.Slipped)
	// Seven netblocks, one name: each bucket sends its burst once.
	assert.Equal(t, uint64(7*200), st.Sent)
}

func BenchmarkRRLCheck(b *testing.B) {
	cfg := dnsserver.DefaultRRLConfig()
	cfg.Rate = 1000
	l, _ := dnsserver.NewRateLimiter(cfg)
	name := []byte("\x03www\x07example\x03com\x00")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		l.Check(t0, a, dnsserver.RRLPositive, name)
	}
}
