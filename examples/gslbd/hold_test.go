package main

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// gatedHandler drops every log record, and holds the goroutine that logs
// an "address state" line (observe, the Monitor's deliverer) until gate
// closes.
type gatedHandler struct{ gate chan struct{} }

func (h gatedHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h gatedHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "address state" {
		<-h.gate
	}
	return nil
}
func (h gatedHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h gatedHandler) WithGroup(string) slog.Handler      { return h }

// TestStartupHoldWaitsForObservedResults: the first publication waits
// until the controller has taken in every address's first probe result,
// not only until the Monitor has counted one. The Monitor counts a result,
// then delivers its event from another goroutine; the hold, which looked
// at the counts alone, published while events were still on their way,
// every address whose event had not arrived still critical (a start
// without a state file): a healthy record answered its failover name when
// DNS opened (the torture walk's seed 39004, I2). Here the deliverer is
// held in the first event's log line, so the other addresses' results are
// counted and not observed: the hold must go on, then publish them all.
func TestStartupHoldWaitsForObservedResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := ParseConfig([]byte(withStateDir(apiYAML + "    failover: backup.example.net.\n")))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		h := gatedHandler{gate: make(chan struct{})}
		c, err := newController(cfg, deps{prober: (&fakeProbers{}).prober}, newMetrics(), slog.New(h))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		time.Sleep(time.Second) // every probe (instant) is in, many hold ticks
		synctest.Wait()
		pending := c.firstResultsPending()
		if !c.holding.Load() {
			close(h.gate)
			cancel()
			<-done
			t.Fatalf("the hold published with %d addresses' first results counted by the Monitor but not taken in", 2)
		}
		if pending != 2 {
			t.Errorf("pending first results: %d, want 2 (one event in the observer's hands, two queued)", pending)
		}
		close(h.gate)
		time.Sleep(time.Second)
		synctest.Wait()
		if c.holding.Load() || c.firstResultsPending() != 0 {
			t.Errorf("still holding after every event was observed (pending %d)", c.firstResultsPending())
		}
		if got, want := zoneAnswer(c.zone, "app.example.test."), []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}; !slices.Equal(got, want) {
			t.Errorf("first answer %v, want %v", got, want)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
