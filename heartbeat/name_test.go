package heartbeat

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNaming(t *testing.T) {
	cases := []struct {
		name, prefix, cluster, zone, want string
		wantErr                           bool
	}{
		{name: "default prefix", cluster: "eu-1", zone: "global.example.com", want: "health-001-eu-1.global.example.com."},
		{name: "upper case folded", cluster: "EU-1", zone: "Example.COM.", want: "health-001-eu-1.example.com."},
		{name: "custom prefix", prefix: "hb-", cluster: "c1", zone: "example.com", want: "hb-c1.example.com."},
		{name: "empty cluster", cluster: "", zone: "example.com", wantErr: true},
		{name: "dot in cluster", cluster: "a.b", zone: "example.com", wantErr: true},
		{name: "underscore in cluster", cluster: "a_b", zone: "example.com", wantErr: true},
		{name: "leading hyphen", cluster: "-a", zone: "example.com", wantErr: true},
		{name: "label too long with prefix", cluster: strings.Repeat("a", 53), zone: "example.com", wantErr: true, want: `heartbeat: invalid name: cluster = "` + strings.Repeat("a", 53) + `": allowed [1, 52] bytes with prefix "health-001-"`},
		{name: "longest cluster", cluster: strings.Repeat("a", 52), zone: "example.com", want: "health-001-" + strings.Repeat("a", 52) + ".example.com."},
		{name: "bad prefix", prefix: "h.b-", cluster: "c", zone: "example.com", wantErr: true},
		{name: "bad zone", cluster: "c", zone: "exa mple.com", wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := Naming{Prefix: c.prefix}
			got, err := n.Name(c.cluster, c.zone)
			if c.wantErr {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrName)
				var fe *FieldError
				assert.ErrorAs(t, err, &fe)
				if c.want != "" {
					assert.EqualError(t, err, c.want)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
			back, ok := n.Cluster(got, c.zone)
			require.True(t, ok)
			assert.Equal(t, strings.ToLower(c.cluster), back)
			l, err := n.Label(c.cluster)
			require.NoError(t, err)
			back, ok = n.Cluster(l, c.zone)
			require.True(t, ok)
			assert.Equal(t, strings.ToLower(c.cluster), back)
		})
	}
}

func TestNamingCluster(t *testing.T) {
	cases := []struct {
		name, rec string
		want      string
		ok        bool
	}{
		{"relative", "health-001-a", "a", true},
		{"fqdn in zone", "health-001-a.example.com.", "a", true},
		{"fqdn outside zone", "health-001-a.other.com.", "", false},
		{"deeper name", "health-001-a.sub", "", false},
		{"other prefix", "health-002-a", "", false},
		{"prefix only", "health-001-", "", false},
		{"apex", "@", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Naming{}.Cluster(c.rec, "example.com.")
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestScopeText(t *testing.T) {
	for _, s := range []Scope{Local, Global} {
		b, err := s.MarshalText()
		require.NoError(t, err)
		var back Scope
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, s, back)
	}
	var s Scope
	assert.Error(t, s.UnmarshalText([]byte("regional")))
	_, err := Scope(0).MarshalText()
	assert.Error(t, err)
}

func TestNameDefault(t *testing.T) {
	got, err := Name("eu-1", "example.com")
	require.NoError(t, err)
	assert.Equal(t, "health-001-eu-1.example.com.", got)
}
