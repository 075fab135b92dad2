package main

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/gslbkit/gslb/record"
)

// TestReadBackMetric: the reconciler's read-back events (a set the
// provider kept different from what was written) reach
// gslbkit_provider_readback_mismatches_total, conflicts apart.
func TestReadBackMetric(t *testing.T) {
	met := newMetrics()
	obs := met.reconcilerObserver("rfc2136", true, nil)
	obs.Observe(record.ReadBackEvent{At: time.Unix(1, 0)})
	obs.Observe(record.ReadBackEvent{At: time.Unix(2, 0)})
	obs.Observe(record.ReadBackEvent{At: time.Unix(3, 0), Conflict: true})
	for result, want := range map[string]float64{"differed": 2, "conflict": 1} {
		var m dto.Metric
		if err := met.readBack.WithLabelValues("rfc2136", result).Write(&m); err != nil {
			t.Fatal(err)
		}
		if got := m.GetCounter().GetValue(); got != want {
			t.Errorf("result=%s: %v, want %v", result, got, want)
		}
	}
}
