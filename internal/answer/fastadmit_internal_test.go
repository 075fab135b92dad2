package answer

import (
	"fmt"
	"testing"
)

// TestDoorkeeper: a key is admitted on its second sighting, not its
// first, and the set clears itself after doorBits/8 first sightings.
func TestDoorkeeper(t *testing.T) {
	d := newDoorkeeper()
	if d.admit([]byte("a")) {
		t.Fatal("admitted on the first sighting")
	}
	if !d.admit([]byte("a")) {
		t.Fatal("not admitted on the second sighting")
	}
	fp := 0
	for i := range doorBits/8 - 1 { // the last one clears the set
		if d.admit(fmt.Appendf(nil, "k%d", i)) {
			fp++
		}
	}
	if fp > doorBits/8/16 {
		t.Errorf("%d of %d new keys taken for second sightings", fp, doorBits/8)
	}
	for i := range 2 * doorBits / 8 {
		d.admit(fmt.Appendf(nil, "x%d", i))
	}
	set := 0
	for i := range d.bits {
		for w := d.bits[i].Load(); w != 0; w &= w - 1 {
			set++
		}
	}
	if set > doorBits/4 {
		t.Errorf("%d of %d bits set: the set was not cleared", set, doorBits)
	}
}
