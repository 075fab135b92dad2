package main

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

var leases = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// The API server's reachability as /readyz reports it (api_unreachable):
// a watch that failed for want of a connection is cleared by the first
// answer to another request; a watch refused by the server (a status)
// only by the informers' next event; the Lease's requests failing count
// after unreachableAfter.
func TestWatcherReachability(t *testing.T) {
	w := &watcher{kick: make(chan struct{}, 1), unreachableAfter: 2 * time.Second}
	w.connected.Store(true)
	bad := func(at time.Time) bool { _, _, b := w.watchProblem(at); return b }
	now := time.Now()
	if bad(now) {
		t.Fatal("a new watcher reports a problem")
	}
	l := &renewals{Interface: fakeLock{}, w: w}

	w.watchError(errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"))
	if !bad(now) {
		t.Fatal("a failed watch is not reported")
	}
	l.answer(apierrors.NewTooManyRequests("shutting down", 1))
	if !bad(now) {
		t.Fatal("a 429 cleared the problem: the server is not serving")
	}
	l.answer(apierrors.NewConflict(leases, "gslb-controller", errors.New("changed")))
	if bad(now) {
		t.Fatal("an answer of the API server did not clear a connection failure")
	}

	w.watchError(apierrors.NewForbidden(leases, "", errors.New("RBAC")))
	l.answer(nil)
	if !bad(now) {
		t.Fatal("an answer cleared a watch the server refused")
	}
	w.changed()
	if bad(now) {
		t.Fatal("an informer event did not clear the watch error")
	}

	l.answer(errors.New("EOF"))
	if bad(time.Now()) {
		t.Fatal("one failed request reported at once")
	}
	if !bad(time.Now().Add(2 * time.Second)) {
		t.Fatal("requests failing for unreachableAfter not reported")
	}
	l.answer(apierrors.NewNotFound(leases, "gslb-controller"))
	if bad(time.Now().Add(time.Hour)) {
		t.Fatal("an answer did not clear the failing requests")
	}
}

// A term ends a renew deadline after the send time of its last successful
// renewal; every renewal moves the deadline.
func TestRenewalDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &renewals{Interface: fakeLock{}}
		mine := resourcelock.LeaderElectionRecord{HolderIdentity: "me"}
		if err := l.Update(context.Background(), mine); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ended := make(chan time.Duration, 1)
		go l.watch(t.Context(), 2*time.Second, func() { ended <- time.Since(start) })
		time.Sleep(1500 * time.Millisecond)
		_ = l.Update(context.Background(), mine)                                                       // renewed at 1.5 s
		_ = l.Update(context.Background(), resourcelock.LeaderElectionRecord{})                        // a release: not a renewal
		_ = l.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "other"}) // another holder
		if d := <-ended; d != 3500*time.Millisecond {
			t.Fatalf("the term ended after %v, want 3.5s (the renewal at 1.5 s + 2 s)", d)
		}
	})
}

// fakeLock accepts every request; its identity is "me".
type fakeLock struct{}

func (fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	return &resourcelock.LeaderElectionRecord{}, nil, nil
}
func (fakeLock) Create(context.Context, resourcelock.LeaderElectionRecord) error { return nil }
func (fakeLock) Update(context.Context, resourcelock.LeaderElectionRecord) error { return nil }
func (fakeLock) RecordEvent(string)                                              {}
func (fakeLock) Identity() string                                                { return "me" }
func (fakeLock) Describe() string                                                { return "fake" }
