//go:build race

package probe

// probersRace reports whether the race detector is on (it changes
// allocation sizes and slows crypto down several times).
const probersRace = true
