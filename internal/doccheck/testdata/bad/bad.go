// Package bad is a fixture for doccheck: its docs cite names that exist
// ([Thing], [Thing.Size], [*Thing], [time.Duration], time.Time.Unix,
// Thing.Name) and names that do not.
package bad

import "time"

// width is unexported; Thing.Cells shows it.
const width = 4

// Thing cites [Thing.Missing], [Gone], [time.Nope] and, in prose,
// time.Durationn and Thing.Colour.
type Thing struct {
	// Name is the thing's name; see also bad.Nothing.
	Name string
	// Cells shows an unexported length.
	Cells [width]int
	// Every is how often.
	Every time.Duration
}

// Size returns the size, like [Thing.Name] and [Thing.Size].
func (t Thing) Size() int { return len(t.Name) }
