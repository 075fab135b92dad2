package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// StatusRange is an inclusive range of HTTP status codes. A single code c is
// the range {c, c}. In JSON it is a number (200), a string "200-299", or an
// object {"min":200,"max":299}; it is written back as a number or a string.
type StatusRange struct {
	// Min and Max are the first and last codes of the range, 100–599, Min ≤ Max.
	Min int `json:"min"`
	Max int `json:"max"`
}

// OneStatus returns the range holding just code.
func OneStatus(code int) StatusRange { return StatusRange{Min: code, Max: code} }

// Contains reports whether code is in r.
func (r StatusRange) Contains(code int) bool { return code >= r.Min && code <= r.Max }

// String returns "200" or "200-299".
func (r StatusRange) String() string {
	if r.Min == r.Max {
		return strconv.Itoa(r.Min)
	}
	return strconv.Itoa(r.Min) + "-" + strconv.Itoa(r.Max)
}

// MarshalJSON writes a number for a single code, else "min-max".
func (r StatusRange) MarshalJSON() ([]byte, error) {
	if r.Min == r.Max {
		return []byte(strconv.Itoa(r.Min)), nil
	}
	return json.Marshal(r.String())
}

// UnmarshalJSON reads a number, a "min-max" string, or {"min":…,"max":…}.
func (r *StatusRange) UnmarshalJSON(b []byte) error {
	t := bytes.TrimSpace(b)
	switch {
	case len(t) > 0 && t[0] == '{':
		type plain StatusRange
		var p plain
		if err := json.Unmarshal(t, &p); err != nil {
			return err
		}
		*r = StatusRange(p)
		return nil
	case len(t) > 0 && t[0] == '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return err
		}
		return r.parse(s)
	}
	var n int
	if err := json.Unmarshal(t, &n); err != nil {
		return fmt.Errorf("probe: status %s: want a code such as 200, a range \"200-299\" or {\"min\":200,\"max\":299}", t)
	}
	*r = OneStatus(n)
	return nil
}

func (r *StatusRange) parse(s string) error {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "-")
	min, err1 := strconv.Atoi(strings.TrimSpace(lo))
	max := min
	var err2 error
	if isRange {
		max, err2 = strconv.Atoi(strings.TrimSpace(hi))
	}
	if err1 != nil || err2 != nil {
		return fmt.Errorf("probe: status %q: want a code such as \"200\" or a range \"200-299\"", s)
	}
	*r = StatusRange{Min: min, Max: max}
	return nil
}

// Statuses is a list of status ranges; a code matches when any range holds it.
type Statuses []StatusRange

// Contains reports whether any range in s holds code.
func (s Statuses) Contains(code int) bool {
	for _, r := range s {
		if r.Contains(code) {
			return true
		}
	}
	return false
}

// String returns the ranges joined by commas ("200,300-399").
func (s Statuses) String() string {
	parts := make([]string, len(s))
	for i, r := range s {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// validate checks every range: 100 ≤ Min ≤ Max ≤ 599.
func (s Statuses) validate(sentinel error, field string) error {
	for i, r := range s {
		if r.Min < 100 || r.Min > 599 || r.Max < 100 || r.Max > 599 {
			return fieldErr(sentinel, fmt.Sprintf("%s[%d]", field, i), r, "status codes in [100, 599]")
		}
		if r.Min > r.Max {
			return fieldErr(sentinel, fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("%d-%d", r.Min, r.Max), "a range whose min does not exceed its max")
		}
	}
	return nil
}
