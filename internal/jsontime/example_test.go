package jsontime_test

import (
	"encoding/json"
	"fmt"

	"github.com/gslbkit/gslb/internal/jsontime"
)

func ExampleDuration() {
	var cfg struct {
		Interval jsontime.Duration `json:"interval"`
		Timeout  jsontime.Duration `json:"timeout"`
	}
	_ = json.Unmarshal([]byte(`{"interval":"1m30s","timeout":0.5}`), &cfg)
	fmt.Println(cfg.Interval.D(), cfg.Timeout.D())
	out, _ := json.Marshal(cfg)
	fmt.Println(string(out))
	// Output:
	// 1m30s 500ms
	// {"interval":"1m30s","timeout":"500ms"}
}
