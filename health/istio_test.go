package health

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

const synczAllSynced = `[
 {"cluster_id":"Kubernetes","proxy":"istio-ingressgateway-7d9f-abcde.istio-system","proxy_type":"router","istio_version":"1.24.0",
  "cluster_sent":"n1","cluster_acked":"n1","listener_sent":"n2","listener_acked":"n2","route_sent":"n3","route_acked":"n3",
  "endpoint_sent":"n4","endpoint_acked":"n4"},
 {"proxy":"reviews-v1-123.bookinfo","cluster_sent":"x","cluster_acked":"y"}
]`

const synczOneStale = `[
 {"proxy":"istio-ingressgateway-7d9f-abcde.istio-system","cluster_sent":"n1","cluster_acked":"n1","listener_sent":"n2","listener_acked":"n2",
  "route_sent":"n3","route_acked":"n2","endpoint_sent":"n4","endpoint_acked":"n4"}
]`

const synczNotSent = `[
 {"proxy":"istio-ingressgateway-7d9f-abcde.istio-system","cluster_sent":"n1","cluster_acked":"n1","listener_sent":"n2","listener_acked":"n2",
  "route_sent":"n3","route_acked":"n3"}
]`

const synczOtherProxy = `[{"proxy":"istio-eastwestgateway-1.istio-system","cluster_sent":"a","cluster_acked":"a","listener_sent":"a","listener_acked":"a","route_sent":"a","route_acked":"a","endpoint_sent":"a","endpoint_acked":"a"}]`

func TestParseSyncz(t *testing.T) {
	all, err := ParseSyncz([]byte(synczAllSynced))
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.True(t, all[0].Synced())
	require.Equal(t, Stale, all[1].Clusters)
	require.Equal(t, NotSent, all[1].Routes)
	for _, bad := range []string{`{}`, `[{"proxy":""}]`, `not json`, `[1]`} {
		_, err := ParseSyncz([]byte(bad))
		require.ErrorIs(t, err, ErrSyncz, bad)
	}
}

func TestIstioSyncAgainstALocalIstiod(t *testing.T) {
	var doc atomic.Value
	doc.Store(synczAllSynced)
	var status atomic.Int32
	status.Store(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/syncz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte(doc.Load().(string)))
	}))
	defer srv.Close()
	s := &IstioSync{BaseURL: srv.URL, Selector: ProxySelector{NamePrefix: "istio-ingressgateway-", Namespace: "istio-system"}, Client: srv.Client()}
	require.False(t, s.Check(t0).Healthy, "not polled yet")
	cases := []struct {
		name, doc string
		status    int32
		healthy   bool
		reason    string
	}{
		{"all synced", synczAllSynced, 200, true, ""},
		{"one type stale", synczOneStale, 200, false, "RDS STALE"},
		{"one type not sent", synczNotSent, 200, false, "EDS NOT SENT"},
		{"proxy missing", synczOtherProxy, 200, false, "no proxy istio-ingressgateway-*.istio-system"},
		{"malformed", `[{"proxy":`, 200, false, "syncz"},
		{"istiod error", `oops`, 503, false, "status 503"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc.Store(c.doc)
			status.Store(c.status)
			_ = s.Poll(context.Background())
			sig := s.Check(t0)
			require.Equal(t, c.healthy, sig.Healthy, sig.Reason)
			require.Contains(t, sig.Reason, c.reason)
		})
	}
}

func TestProxySelector(t *testing.T) {
	s := ProxySelector{NamePrefix: "gw-", Namespace: "edge"}
	require.True(t, s.Match("gw-abc.edge"))
	require.False(t, s.Match("gw-abc.edge2"))
	require.False(t, s.Match("other.edge"))
	require.False(t, s.Match("gw-abc"))
}

func FuzzParseSyncz(f *testing.F) {
	for _, s := range []string{synczAllSynced, synczOneStale, synczNotSent, `[]`, `[{"proxy":"a.b"}]`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		all, err := ParseSyncz(data)
		if err != nil {
			return
		}
		for _, p := range all {
			if p.Proxy == "" {
				t.Fatal("accepted an element without a proxy id")
			}
			_ = p.String()
			_ = ProxySelector{NamePrefix: "a", Namespace: "b"}.Verdict(all)
		}
	})
}

func FuzzDecodeEnvoyGatewayPassive(f *testing.F) {
	for _, s := range []string{`{}`, `{"consecutive5XxErrors":5,"interval":"3s"}`, `{"maxEjectionPercent":1e309}`, `{"baseEjectionTime":-1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeEnvoyGatewayPassive(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted an invalid config: %v", err)
		}
		if _, err := NewOutlier(c); err != nil {
			t.Fatal(err)
		}
	})
}
