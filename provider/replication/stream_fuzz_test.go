package replication

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
)

// FuzzStreamSnapshot feeds arbitrary bytes to the streaming snapshot
// decoder, which builds the copy record by record: it must never panic,
// must accept exactly what parsing the whole Snapshot and restoring it
// accepts, build the same zones, and leave the old copy in place on error.
func FuzzStreamSnapshot(f *testing.F) {
	src := copyMemSource(f, 12)
	var good bytes.Buffer
	_ = src.SnapshotView().WriteJSON(&good, nil)
	f.Add(good.Bytes())
	f.Add(good.Bytes()[:good.Len()/2])
	f.Add([]byte(`{"version":1,"zones":[{"records":[{"name":"a","type":"A","ttl":1,"data":"192.0.2.1"}],"soa":{"ns":"ns.a.","mbox":"h.a."},"name":"a."}]}`))
	f.Add([]byte(`{"version":1,"zones":[{"name":"a.","soa":{"ns":"ns.a.","mbox":"h.a."},"records":[{"name":"@","type":"CNAME","ttl":1,"data":"x."}]}]}`))
	f.Add([]byte(`{"zones":[{"name":"a.","soa":{"ns":"ns.a.","mbox":"h.a."}},{"name":"A.","soa":{"ns":"ns.a.","mbox":"h.a."}}]}`))
	f.Add([]byte(`{"zones":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		local := copyMemSource(t, 2)
		before := local.Snapshot()
		b := memory.NewSnapshotBuilder(context.Background())
		err := readSnapshotInto(bytes.NewReader(data), b)
		if err == nil {
			err = local.RestoreBuilt(b)
		}
		if err != nil && !reflect.DeepEqual(local.Snapshot(), before) {
			t.Fatalf("a failed stream changed the copy: %v", err)
		}
		q := copyMemSource(t, 2)
		s, perr := ParseSnapshot(data)
		if perr == nil {
			perr = q.Restore(s)
		}
		if (err == nil) != (perr == nil) {
			t.Fatalf("streamed: %v; whole: %v", err, perr)
		}
		if err != nil {
			return
		}
		got, want := local.Snapshot(), q.Snapshot()
		got.Version, want.Version, got.Epoch, want.Epoch = 0, 0, "", ""
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Fatalf("streamed\n%s\nwhole\n%s", g, w)
		}
	})
}
