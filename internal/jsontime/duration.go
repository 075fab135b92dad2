package jsontime

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that marshals to and from a Go duration string
// ("3s", "250ms", "1m30s"). Unmarshalling also accepts a JSON number, read
// as seconds (e.g. 30 or 0.5), since several peers' configs use that form.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	switch x := v.(type) {
	case string:
		p, err := time.ParseDuration(x)
		if err != nil {
			return fmt.Errorf("duration %q: want a Go duration such as \"3s\" or \"1m30s\"", x)
		}
		*d = Duration(p)
	case float64:
		const max = float64(1<<63-1) / float64(time.Second)
		if x > max || x < -max {
			return fmt.Errorf("duration %v s: out of range", x)
		}
		*d = Duration(x * float64(time.Second))
	case nil:
		*d = 0
	default:
		return fmt.Errorf("duration: want a string such as \"3s\" or a number of seconds, got %s", string(b))
	}
	return nil
}

// MarshalText writes d as a duration string (used by map keys and text encoders).
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }
