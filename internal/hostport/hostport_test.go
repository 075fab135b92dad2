package hostport

import (
	"net"
	"testing"
	"unsafe"
)

func TestJoin(t *testing.T) {
	for _, c := range []struct {
		addr, defPort string
		override      int
		reused        bool
	}{
		{"127.0.0.1:80", "", 0, true},
		{"example.com:8080", "", 0, true},
		{"[::1]:443", "", 0, false}, // the brackets: the split host differs
		{"127.0.0.1", "80", 0, false},
		{"127.0.0.1:80", "", 8080, false},
		{"::1", "443", 0, false},
	} {
		host, port, err := Split(c.addr, c.defPort, c.override)
		if err != nil {
			t.Fatalf("%q: %v", c.addr, err)
		}
		got := Join(c.addr, host, port)
		if want := net.JoinHostPort(host, port); got != want {
			t.Errorf("Join(%q, %q, %q) = %q, want %q", c.addr, host, port, got, want)
		}
		if reused := unsafe.StringData(got) == unsafe.StringData(c.addr); reused != c.reused {
			t.Errorf("Join(%q, %q, %q): addr reused %v, want %v", c.addr, host, port, reused, c.reused)
		}
	}
}
