package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/internal/testproc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestQuickstartFailsOverAndRecovers runs the demo with short intervals on
// real loopback sockets and checks that the failover and then the recovery
// happened, in that order. Times are reported, not asserted: a busy machine
// delays timers. The 60 s hang guard is the demo's own -duration.
func TestQuickstartFailsOverAndRecovers(t *testing.T) {
	var out testproc.Buffer
	args := []string{"-port", "0", "-interval", "200ms", "-timeout", "100ms",
		"-kill-after", "300ms", "-down-for", "1s", "-ttl", "1s", "-duration", "60s"}
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	s := out.String()
	fo := strings.Index(s, "RESULT failover")
	rc := strings.Index(s, "RESULT recovery")
	if fo < 0 || rc < 0 || rc < fo {
		t.Fatalf("want a failover then a recovery; output:\n%s", s)
	}
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "RESULT") {
			t.Log(l) // measured detection time beside the bound
		}
	}
	for _, want := range []string{"dig @127.0.0.1 -p", "backend-2  passing → warning", "all three backends are in the answer"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

func TestQuickstartRejectsBadFlags(t *testing.T) {
	cases := map[string][]string{
		"port":     {"-port", "70000"},
		"timeout":  {"-interval", "1s", "-timeout", "2s"},
		"interval": {"-interval", "1ms"},
		"ttl":      {"-ttl", "0s"},
		"duration": {"-duration", "-1s"},
		"down-for": {"-down-for", "0s"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var out testproc.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := run(ctx, args, &out)
			if !errors.Is(err, errFlags) || !strings.HasPrefix(err.Error(), "quickstart: invalid flags: -"+name+" = ") {
				t.Fatalf("err = %v, want one naming -%s", err, name)
			}
		})
	}
	err := run(context.Background(), []string{"-port", "70000"}, new(testproc.Buffer))
	if want := "quickstart: invalid flags: -port = 70000: allowed [0, 65535]"; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}
