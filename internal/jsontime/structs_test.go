package jsontime

import (
	"strings"
	"testing"
	"time"
)

type inner struct {
	Wait time.Duration `json:"wait"`
}

type cfg struct {
	Name     string        `json:"name"`
	Interval time.Duration `json:"interval"`
	Max      int           `json:"max,omitempty"`
	Skip     time.Duration `json:"-"`
	Inner    inner         `json:"inner"`
	hidden   int
}

func TestMarshalStruct(t *testing.T) {
	b, err := Marshal(cfg{Name: "a", Interval: 1500 * time.Millisecond, Skip: time.Hour, Inner: inner{Wait: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"name":"a","interval":"1.5s","inner":{"wait":3}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestUnmarshalStruct(t *testing.T) {
	c := cfg{Name: "kept", Max: 7, hidden: 1}
	if err := Unmarshal([]byte(`{"interval":"2s","inner":{"wait":5}}`), &c); err != nil {
		t.Fatal(err)
	}
	if c.Name != "kept" || c.Max != 7 || c.Interval != 2*time.Second || c.Inner.Wait != 5 || c.hidden != 1 {
		t.Fatalf("%+v", c)
	}
	if err := Unmarshal([]byte(`{"interval":0.25}`), &c); err != nil || c.Interval != 250*time.Millisecond {
		t.Fatalf("seconds: %v %v", err, c.Interval)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"Interval":"2s"}`, `did you mean "interval"`},
		{`{"intervall":"2s"}`, `unknown key "intervall"`},
		{`{"interval":"soon"}`, `"soon"`},
		{`{"interval":`, `unexpected end`},
	} {
		err := Unmarshal([]byte(tc.in), &c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestShadowRejectsEmbedding(t *testing.T) {
	type e struct{ inner }
	if _, err := Marshal(e{}); err == nil {
		t.Fatal("an embedded struct was accepted")
	}
}
