package probe

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestHTTPConfigValidate(t *testing.T) {
	body := textPayload("x")
	cases := []struct {
		name  string
		edit  func(*HTTPConfig)
		field string // "" = valid
	}{
		{"default is valid", func(*HTTPConfig) {}, ""},
		{"empty method means GET", func(c *HTTPConfig) { c.Method = "" }, ""},
		{"unknown method", func(c *HTTPConfig) { c.Method = "BREW" }, "method"},
		{"lower-case method", func(c *HTTPConfig) { c.Method = "get" }, "method"},
		{"empty path means /", func(c *HTTPConfig) { c.Path = "" }, ""},
		{"path without slash", func(c *HTTPConfig) { c.Path = "x" }, "path"},
		{"path too long", func(c *HTTPConfig) { c.Path = "/" + strings.Repeat("a", 1024) }, "path"},
		{"path of 1024 characters", func(c *HTTPConfig) { c.Path = "/" + strings.Repeat("a", 1023) }, ""},
		{"path must start with a slash", func(c *HTTPConfig) { c.Path = "healthz" }, "path"},
		{"path with a space", func(c *HTTPConfig) { c.Path = "/a b" }, "path"},
		{"path with CRLF", func(c *HTTPConfig) { c.Path = "/a\r\nX: y" }, "path"},
		{"path with a bad escape", func(c *HTTPConfig) { c.Path = "/%zz" }, "path"},
		{"path starting with two slashes", func(c *HTTPConfig) { c.Path = "//x" }, "path"},
		{"hostname with a space", func(c *HTTPConfig) { c.Hostname = "a b" }, "hostname"},
		{"hostname with port", func(c *HTTPConfig) { c.Hostname = "svc.example:8080" }, ""},
		{"header sets Host", func(c *HTTPConfig) { c.Headers = map[string]string{"host": "x"} }, "headers"},
		{"header with CR in value", func(c *HTTPConfig) { c.Headers = map[string]string{"X-A": "a\rb"} }, "headers"},
		{"header with bad name", func(c *HTTPConfig) { c.Headers = map[string]string{"X A": "a"} }, "headers"},
		{"body with GET", func(c *HTTPConfig) { c.RequestBody = &body }, "requestBody"},
		{"body with PATCH", func(c *HTTPConfig) { c.Method = "PATCH"; c.RequestBody = &body }, ""},
		{"body with OPTIONS", func(c *HTTPConfig) { c.Method = "OPTIONS"; c.RequestBody = &body }, ""},
		{"empty body", func(c *HTTPConfig) { c.Method = "POST"; c.RequestBody = &Payload{} }, "requestBody"},
		{"expected status 99", func(c *HTTPConfig) { c.ExpectedStatuses = Statuses{OneStatus(99)} }, "expectedStatuses"},
		{"expected status 600", func(c *HTTPConfig) { c.ExpectedStatuses = Statuses{{Min: 200, Max: 600}} }, "expectedStatuses"},
		{"inverted range", func(c *HTTPConfig) { c.RetriableStatuses = Statuses{{Min: 504, Max: 500}} }, "retriableStatuses"},
		{"expected response with HEAD", func(c *HTTPConfig) {
			c.Method = "HEAD"
			c.ExpectedResponse = Segments{textPayload("x")}
		}, "expectedResponse"},
		{"bad hex segment", func(c *HTTPConfig) { c.ExpectedResponse = Segments{hexPayload("zz")} }, "expectedResponse"},
		{"negative window", func(c *HTTPConfig) { c.MatchWindow = -1 }, "matchWindow"},
		{"huge window", func(c *HTTPConfig) { c.MatchWindow = HTTPMaxMatchWindow + 1 }, "matchWindow"},
		{"port 65536", func(c *HTTPConfig) { c.Port = 65536 }, "port"},
		{"negative connect timeout", func(c *HTTPConfig) { c.ConnectTimeout = -1 }, "connectTimeout"},
		{"negative response timeout", func(c *HTTPConfig) { c.ResponseTimeout = -1 }, "responseTimeout"},
		{"unknown engine", func(c *HTTPConfig) { c.Engine = "curl" }, "engine"},
		{"tls cert without key", func(c *HTTPConfig) { c.TLS = &TLSConfig{CertFile: "x"} }, "tls"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultHTTPConfig()
			tc.edit(&c)
			err := c.Validate()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrHTTPConfig)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Contains(t, fe.Path, tc.field)
			assert.Contains(t, err.Error(), tc.field)
			_, err = NewHTTP("127.0.0.1:80", c)
			require.ErrorIs(t, err, ErrHTTPConfig, "NewHTTP validates")
		})
	}
}

func TestHTTPConfigValidateEnvoyGateway(t *testing.T) {
	body := textPayload("x")
	for _, m := range []string{"POST", "PUT"} {
		c := DefaultHTTPConfig()
		c.Method, c.RequestBody = m, &body
		require.NoError(t, c.ValidateEnvoyGateway(), m)
	}
	for _, m := range []string{"PATCH", "OPTIONS"} {
		c := DefaultHTTPConfig()
		c.Method, c.RequestBody = m, &body
		require.NoError(t, c.Validate(), m)
		err := c.ValidateEnvoyGateway()
		require.ErrorIs(t, err, ErrHTTPConfig, m)
		require.Contains(t, err.Error(), "requestBody")
	}
}

func TestHTTPConfigJSON(t *testing.T) {
	in := `{"method":"POST","path":"/hc","hostname":"svc","requestBody":{"type":"Text","text":"ping"},
		"expectedStatuses":[200,"300-399",{"min":204,"max":206}],"retriableStatuses":[503],
		"expectedResponse":{"type":"Hex","hex":"6f6b"},"matchWindow":0,"port":8080,
		"connectTimeout":"4s","responseTimeout":"2s","tls":{"serverName":"svc","insecureSkipVerify":true,"disableResumption":true}}`
	c := DefaultHTTPConfig()
	require.NoError(t, json.Unmarshal([]byte(in), &c))
	require.NoError(t, c.Validate())
	assert.Equal(t, Statuses{OneStatus(200), {300, 399}, {204, 206}}, c.ExpectedStatuses)
	assert.Equal(t, Segments{hexPayload("6f6b")}, c.ExpectedResponse)
	assert.Equal(t, 0, c.MatchWindow)
	assert.Equal(t, 4*time.Second, c.ConnectTimeout)
	assert.True(t, c.TLS.DisableResumption)
	out, err := json.Marshal(c)
	require.NoError(t, err)
	var back HTTPConfig
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, c, back)

	t.Run("decoding into the default keeps the 1024-byte window", func(t *testing.T) {
		c := DefaultHTTPConfig()
		require.NoError(t, json.Unmarshal([]byte(`{"path":"/x"}`), &c))
		assert.Equal(t, HTTPDefaultMatchWindow, c.MatchWindow)
	})
	t.Run("bad status", func(t *testing.T) {
		var c HTTPConfig
		require.Error(t, json.Unmarshal([]byte(`{"expectedStatuses":["2xx"]}`), &c))
	})
	t.Run("resumption is the default and resumeSessions is gone", func(t *testing.T) {
		c := DefaultHTTPConfig()
		require.NoError(t, json.Unmarshal([]byte(`{"tls":{}}`), &c))
		assert.False(t, c.TLS.DisableResumption)
		require.ErrorContains(t, json.Unmarshal([]byte(`{"tls":{"resumeSessions":true}}`), &c), "resumeSessions")
	})
}

func TestHTTPPresets(t *testing.T) {
	r := Route53HTTP()
	require.NoError(t, r.Validate())
	assert.Equal(t, 4*time.Second, r.ConnectTimeout)
	assert.Equal(t, 2*time.Second, r.ResponseTimeout)
	assert.Equal(t, 5120, r.MatchWindow)
	assert.True(t, r.ExpectedStatuses.Contains(302))
	assert.False(t, r.ExpectedStatuses.Contains(404))
	s := Route53HTTPS()
	require.NoError(t, s.Validate())
	require.True(t, s.TLS.InsecureSkipVerify)
	d := DefaultHTTPConfig()
	assert.Equal(t, "GET", d.Method)
	assert.Equal(t, 1024, d.MatchWindow)
}

func TestNewHTTPAddresses(t *testing.T) {
	cases := []struct {
		addr string
		tls  bool
		port int
		dial string
		host string
		err  bool
	}{
		{addr: "127.0.0.1:8080", dial: "127.0.0.1:8080", host: "127.0.0.1:8080"},
		{addr: "127.0.0.1", dial: "127.0.0.1:80", host: "127.0.0.1"},
		{addr: "127.0.0.1", tls: true, dial: "127.0.0.1:443", host: "127.0.0.1"},
		{addr: "::1", dial: "[::1]:80", host: "[::1]"},
		{addr: "[::1]:81", dial: "[::1]:81", host: "[::1]:81"},
		{addr: "[::1]", dial: "[::1]:80", host: "[::1]"},
		{addr: "svc.example", port: 9090, dial: "svc.example:9090", host: "svc.example:9090"},
		{addr: "svc.example:80", dial: "svc.example:80", host: "svc.example"},
		{addr: "", err: true},
		{addr: "host:0", err: true},
		{addr: "host:http", err: true},
		{addr: "a b:80", err: true},
	}
	for _, tc := range cases {
		t.Run(tc.addr, func(t *testing.T) {
			c := DefaultHTTPConfig()
			c.Port = tc.port
			if tc.tls {
				c.TLS = &TLSConfig{InsecureSkipVerify: true}
			}
			h, err := NewHTTP(tc.addr, c)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.dial, h.Addr())
			assert.Contains(t, string(h.req), "\r\nHost: "+tc.host+"\r\n")
		})
	}
}

func TestNewHTTPCopiesConfig(t *testing.T) {
	c := DefaultHTTPConfig()
	c.Headers = map[string]string{"X-A": "1"}
	h, err := NewHTTP("127.0.0.1:80", c)
	require.NoError(t, err)
	c.Headers["X-A"] = "2"
	c.ExpectedStatuses[0] = OneStatus(500)
	got := h.Config()
	assert.Equal(t, "1", got.Headers["X-A"])
	assert.Equal(t, OneStatus(200), got.ExpectedStatuses[0])
	assert.Contains(t, string(h.req), "X-A: 1\r\n")
}

// TestHTTPVerdictModel checks the HTTP classification against a small
// independent model of Envoy's rules 5 and 6 for random status lists,
// codes and body outcomes.
func TestHTTPVerdictModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rng := func(label string) Statuses {
			n := rapid.IntRange(0, 3).Draw(t, label+"Len")
			var s Statuses
			for i := 0; i < n; i++ {
				lo := rapid.IntRange(100, 599).Draw(t, label+"Min")
				hi := rapid.IntRange(lo, min(lo+20, 599)).Draw(t, label+"Max")
				s = append(s, StatusRange{Min: lo, Max: hi})
			}
			return s
		}
		cfg := DefaultHTTPConfig()
		cfg.ExpectedStatuses = rng("expected")
		cfg.RetriableStatuses = rng("retriable")
		withBody := rapid.Bool().Draw(t, "withBody")
		if withBody {
			cfg.ExpectedResponse = Segments{textPayload("ok")}
		}
		h, err := NewHTTP("127.0.0.1:80", cfg)
		if err != nil {
			t.Fatal(err)
		}
		code := rapid.IntRange(100, 599).Draw(t, "code")
		matched := rapid.Bool().Draw(t, "matched")
		got := h.verdict(code, nil, matched)

		in := func(s Statuses) bool {
			for _, r := range s {
				if code >= r.Min && code <= r.Max {
					return true
				}
			}
			return false
		}
		expected := in(cfg.ExpectedStatuses) || (len(cfg.ExpectedStatuses) == 0 && code == 200)
		var want Status
		var kind Kind
		switch {
		case withBody && !matched: // rule 5: the body first
			want, kind = FailNow, KindBody
		case expected: // rule 6: expected wins over retriable
			want, kind = Pass, KindNone
		case in(cfg.RetriableStatuses):
			want, kind = Fail, KindStatus
		default:
			want, kind = FailNow, KindStatus
		}
		if got.Status != want || got.Kind != kind || got.Code != code {
			t.Fatalf("code %d: got %v/%v/%d, model %v/%v", code, got.Status, got.Kind, got.Code, want, kind)
		}
	})
}

// FuzzHTTPConfigJSON: decoding an http block onto the defaults never
// panics, and what decodes writes back and reads again to the same JSON.
func FuzzHTTPConfigJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"path":"/healthz","expectedStatuses":[200,"300-399"],"connectTimeout":"4s","responseTimeout":2}`,
		`{"method":"POST","requestBody":{"type":"Hex","hex":"706f"},"expectedResponse":{"text":"ok"},"matchWindow":0}`,
		`{"tls":{"serverName":"x","insecureSkipVerify":true},"headers":{"a":"b"},"engine":"nethttp"}`,
		`{"tls":{"disableResumption":true,"curves":["X25519"]}}`,
		`{"connectTimeout":"soon"}`, `{"conectTimeout":"1s"}`, `null`, `{} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := DefaultHTTPConfig()
		if err := json.Unmarshal(data, &c); err != nil {
			return
		}
		_ = c.Validate()
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var d HTTPConfig // onto the zero config: omitted fields are zero in c too
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("round trip of %s: %v", b, err)
		}
		b2, err := json.Marshal(d)
		if err != nil || string(b2) != string(b) {
			t.Fatalf("round trip changed %s into %s (%v)", b, b2, err)
		}
	})
}

// TestNewHTTPSharesConfig checks that probers built with equal configs
// share one private copy, and that sharing never changes what Config
// returns.
func TestNewHTTPSharesConfig(t *testing.T) {
	newHTTP := func(c HTTPConfig) *HTTP {
		t.Helper()
		h, err := NewHTTP("127.0.0.1:80", c)
		require.NoError(t, err)
		return h
	}
	a, b := newHTTP(DefaultHTTPConfig()), newHTTP(DefaultHTTPConfig())
	assert.Same(t, a.cfg, b.cfg, "equal configs share a copy")
	assert.Equal(t, DefaultHTTPConfig(), b.Config())

	c := DefaultHTTPConfig()
	c.Path = "/health"
	other := newHTTP(c)
	assert.NotSame(t, a.cfg, other.cfg)
	assert.Equal(t, "/", a.Config().Path)
	assert.Equal(t, "/health", other.Config().Path)

	c = DefaultHTTPConfig()
	c.RetriableStatuses = Statuses{}
	assert.NotSame(t, a.cfg, newHTTP(c).cfg, "nil and empty lists differ")
	assert.NotNil(t, newHTTP(c).Config().RetriableStatuses)

	c = DefaultHTTPConfig()
	c.Headers = map[string]string{"X-A": "1"}
	h1, h2 := newHTTP(c), newHTTP(c)
	assert.NotSame(t, h1.cfg, h2.cfg, "configs with headers are not shared")

	c = DefaultHTTPConfig()
	c.TLS = &TLSConfig{InsecureSkipVerify: true, Curves: []string{"X25519"}}
	h1 = newHTTP(c)
	c.TLS = &TLSConfig{InsecureSkipVerify: true, Curves: []string{"X25519"}}
	h2 = newHTTP(c)
	assert.Same(t, h1.cfg, h2.cfg, "equal TLS settings share a copy")
	c.TLS.Curves[0] = "P256"
	assert.Equal(t, []string{"X25519"}, h2.Config().TLS.Curves)
}

// TestHTTPConfigEqualSeesEveryField changes each field of HTTPConfig and of
// its TLSConfig in turn: httpConfigEqual must tell every change apart, so a
// field added to either struct cannot make probers share a config that is
// not theirs.
func TestHTTPConfigEqualSeesEveryField(t *testing.T) {
	base := func() HTTPConfig {
		c := DefaultHTTPConfig()
		c.TLS = &TLSConfig{}
		return c
	}
	b := base()
	require.True(t, httpConfigEqual(&b, &b))
	change := func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Int, reflect.Int64:
			v.SetInt(v.Int() + 7)
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Slice:
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		case reflect.Map:
			v.Set(reflect.MakeMap(v.Type()))
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
		default:
			t.Fatalf("no change for a %s field: extend the test", v.Kind())
		}
	}
	for _, tlsField := range []bool{false, true} {
		typ := reflect.TypeFor[HTTPConfig]()
		if tlsField {
			typ = reflect.TypeFor[TLSConfig]()
		}
		for i := range typ.NumField() {
			c := base()
			v := reflect.ValueOf(&c).Elem()
			if tlsField {
				v = reflect.ValueOf(c.TLS).Elem()
			} else if typ.Field(i).Name == "TLS" {
				c.TLS = nil
				continue
			}
			change(v.Field(i))
			assert.False(t, httpConfigEqual(&b, &c), "a change of %s.%s goes unseen", typ.Name(), typ.Field(i).Name)
		}
	}
	c := base()
	c.TLS = nil
	assert.False(t, httpConfigEqual(&b, &c), "TLS set and not")
}
