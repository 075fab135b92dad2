// Package kit is what record's test kits, record/fencetest and
// record/replacetest, share: playing their scenarios, each against a fresh
// store, as one error naming the scenario (Check) or as subtests (Run), and
// checking what a zone holds at a name and type (Read, Holds).
package kit
