// Package fencetest is the test kit for record.Fencer implementations: a
// store that applies a write only while the zone's fence record holds an
// expected value. Check and Run play the scenarios a fenced Reconciler
// relies on against a real store: a compare-and-set that takes a free zone
// and moves the fence, a late writer expecting an old fence refused with
// nothing of its write visible, a first fence refused where one already is,
// and two Reconcilers, the older frozen between its read and its write
// while the newer takes over, where the late write must fail with
// record.ErrFenced — and, as the control that shows the scenario races, the
// same late write landing when neither writer fences.
//
// provider/memory, provider/rfc2136 (against a real BIND) and
// provider/route53 (against a fake that checks a DELETE as Route 53
// documents) pass it. See Example for a store that passes and one that
// ignores its fence.
package fencetest
