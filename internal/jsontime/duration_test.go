package jsontime

import (
	"encoding/json"
	"testing"
	"time"
)

func TestDurationJSON(t *testing.T) {
	var s struct {
		A Duration `json:"a"`
		B Duration `json:"b"`
		C Duration `json:"c"`
	}
	if err := json.Unmarshal([]byte(`{"a":"3s","b":1.5,"c":null}`), &s); err != nil {
		t.Fatal(err)
	}
	if s.A.D() != 3*time.Second || s.B.D() != 1500*time.Millisecond || s.C != 0 {
		t.Fatalf("%+v", s)
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"a":"3s","b":"1.5s","c":"0s"}` {
		t.Fatal(string(out))
	}
	for _, bad := range []string{`{"a":"3 parsecs"}`, `{"a":true}`, `{"a":1e300}`, `{"a":[1]}`} {
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func FuzzDurationJSON(f *testing.F) {
	for _, s := range []string{`"3s"`, `1.5`, `null`, `"-1h"`, `"1.5.5s"`, `1e400`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var d Duration
		if err := json.Unmarshal([]byte(s), &d); err != nil {
			return
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var d2 Duration
		if err := json.Unmarshal(b, &d2); err != nil || d2 != d {
			t.Fatalf("round trip %s -> %s -> %v (%v)", s, b, d2, err)
		}
	})
}
