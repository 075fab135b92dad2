package dnsname

import "testing"

func TestFqdnJoinRelative(t *testing.T) {
	if got := Fqdn("WWW.Example.COM"); got != "www.example.com." {
		t.Fatal(got)
	}
	if got := Fqdn("a.b.."); got != "a.b." {
		t.Fatal(got)
	}
	if got := Fqdn(""); got != "." {
		t.Fatal(got)
	}
	if got := Join("www", "example.com"); got != "www.example.com." {
		t.Fatal(got)
	}
	if got := Join("@", "Example.com."); got != "example.com." {
		t.Fatal(got)
	}
	if got := Join("x.other.", "example.com"); got != "x.other." {
		t.Fatal(got)
	}
	for _, c := range []struct {
		name, zone, want string
		ok               bool
	}{
		{"www.example.com.", "example.com", "www", true},
		{"Example.com", "example.com.", "@", true},
		{"a.b.example.com", "example.com", "a.b", true},
		{"badexample.com", "example.com", "badexample.com.", false},
		{"www.example.org", "example.com", "www.example.org.", false},
	} {
		got, ok := Relative(c.name, c.zone)
		if got != c.want || ok != c.ok {
			t.Errorf("Relative(%q,%q) = %q,%v want %q,%v", c.name, c.zone, got, ok, c.want, c.ok)
		}
	}
	if !Equal("A.example.com", "a.example.com.") || !InZone("x.example.com", "example.com") {
		t.Fatal("Equal/InZone")
	}
}

func TestCheck(t *testing.T) {
	good := []string{"example.com", "eu-west-1.example.com.", "_gslb-owner.www.example.com", "*.example.com", "a"}
	for _, n := range good {
		if err := Check(n); err != nil {
			t.Errorf("Check(%q): %v", n, err)
		}
	}
	long := ""
	for i := 0; i < 64; i++ {
		long += "a"
	}
	bad := []string{"", ".", "-a.example.com", "a-.example.com", "a..b", long + ".com", "a b.com", "é.com"}
	for _, n := range bad {
		if err := Check(n); err == nil {
			t.Errorf("Check(%q) accepted", n)
		}
	}
	if err := CheckLabel("us_east", false); err == nil {
		t.Error("underscore accepted in hostname label")
	}
}
