package probe

import (
	"encoding/json"
	"testing"
)

// FuzzMonitorConfig decodes arbitrary JSON over the default config: Validate
// must never panic, a config it accepts must build a Monitor, and one it
// rejects must not; the shard must own IDs consistently with ShardOf.
func FuzzMonitorConfig(f *testing.F) {
	f.Add([]byte(`{"concurrency": 64, "shard": {"index": 1, "count": 3}, "seed": 7}`))
	f.Add([]byte(`{"latencyWindow": 0}`))
	f.Add([]byte(`{"latencySmoothing": 1e309}`))
	f.Add([]byte(`{"shard": {"index": -1, "count": 65537}}`))
	f.Add([]byte(`{"concurrency": 1, "latencyWindow": 4096, "latencySmoothing": 0.0001}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := DefaultMonitorConfig()
		if err := json.Unmarshal(data, &cfg); err != nil {
			return
		}
		verr := cfg.Validate()
		m, nerr := NewMonitor(cfg, nil, nil)
		if (verr == nil) != (nerr == nil) {
			t.Fatalf("Validate says %v, NewMonitor says %v", verr, nerr)
		}
		if verr != nil {
			if m != nil {
				t.Fatal("NewMonitor returned a Monitor with an error")
			}
			return
		}
		for _, id := range []string{"", "a", string(data)} {
			want := cfg.Shard.Count <= 1 || ShardOf(id, cfg.Shard.Count) == cfg.Shard.Index
			if got := m.Owns(id); got != want {
				t.Fatalf("Owns(%q) = %v, want %v for %+v", id, got, want, cfg.Shard)
			}
		}
	})
}
