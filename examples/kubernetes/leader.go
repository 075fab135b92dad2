package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// elect campaigns for the cluster's Lease until ctx ends, and leads (r.lead)
// while it holds it. Every campaign has a new identity (the pod name plus a
// random suffix), so a replica that lost the lease, or a restarted pod, is
// a new holder: the lease's transitions count up, and the fencing token
// with them.
//
// Timing: the leader renews every retry period. Its term ends, and its
// loops stop writing, a renew deadline after the start of its last
// successful renewal (renewals.watch): client-go's elector would end it
// only once its renewal round has failed (up to a retry period later) and
// its release of the lease has returned (up to two more requests against
// an API server that does not answer). A candidate acquires the lease only
// once it has seen the same record for a lease duration, so with
// renewDeadline < leaseDuration the old leader stops before the new one
// starts, by leaseDuration - renewDeadline, as long as its clock runs and
// its last write returns within that margin. A process paused longer
// (SIGSTOP, a VM freeze) wakes up believing it still leads: its late
// writes carry its older token and the store refuses them (see fence.go).
// With ReleaseOnCancel a replica that stops releases the lease at once, so
// the next one takes over within a retry period.
func (r *replica) elect(ctx context.Context, cs kubernetes.Interface) error {
	for ctx.Err() == nil {
		id := r.cfg.identity + "-" + randomSuffix()
		lock := &renewals{Interface: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: r.cfg.namespace, Name: r.cfg.leaseName},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		}, w: r.w}
		// A term that outlives its renew deadline ends the campaign too
		// (campaign), so that a renewal that still succeeds late finds no
		// term to extend: the next campaign starts afresh.
		cctx, campaign := context.WithCancel(ctx)
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			Name:            r.cfg.leaseName,
			LeaseDuration:   r.cfg.leaseDuration,
			RenewDeadline:   r.cfg.renewDeadline,
			RetryPeriod:     r.cfg.retryPeriod,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) {
					// The term holds termMu until its loops have stopped.
					r.termMu.Lock()
					defer r.termMu.Unlock()
					if lctx.Err() != nil {
						return // started after the campaign ended: nothing to do
					}
					lctx, end := context.WithCancel(lctx)
					defer end()
					go lock.watch(lctx, r.cfg.renewDeadline, func() {
						r.log.Warn("renewal overdue: the term ends", "renewDeadline", r.cfg.renewDeadline)
						end()
						campaign()
					})
					r.met.leading(true)
					defer r.met.leading(false)
					token, err := r.fencingToken(lctx, cs, id)
					if err != nil {
						r.log.Warn("fencing token", "err", err)
						return
					}
					if err := r.lead(lctx, token); err != nil {
						r.log.Warn("term ended", "err", err)
					}
				},
				OnStoppedLeading: func() {},
				OnNewLeader: func(identity string) {
					r.met.leaderSeen(identity == id)
					r.log.Info("leader", "identity", identity, "self", identity == id)
				},
			},
		})
		if err != nil {
			campaign()
			return err
		}
		r.problems.clear("no_leader")
		le.Run(cctx) // returns when the lease is lost or ctx ends
		campaign()
		// Wait for the term, if one started: once its loops have stopped
		// nothing of this campaign writes.
		r.termMu.Lock()
		r.termMu.Unlock() //nolint:staticcheck // an empty critical section: waiting for the term

		// A short pause before the next campaign, as a restarted pod would
		// take.
		select {
		case <-ctx.Done():
		case <-time.After(r.cfg.retryPeriod):
		}
	}
	return nil
}

// fencingToken derives the term's fencing token from the Lease this
// replica now holds: its transitions, which the API server's
// compare-and-swap on resourceVersion makes strictly increasing from one
// holder to the next. A token is never 0.
func (r *replica) fencingToken(ctx context.Context, cs kubernetes.Interface, id string) (uint64, error) {
	lease, err := cs.CoordinationV1().Leases(r.cfg.namespace).Get(ctx, r.cfg.leaseName, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != id {
		return 0, fmt.Errorf("lease %s/%s is held by another replica", r.cfg.namespace, r.cfg.leaseName)
	}
	var n int32
	if lease.Spec.LeaseTransitions != nil {
		n = *lease.Spec.LeaseTransitions
	}
	return uint64(n) + 1, nil
}

// renewals is the campaign's Lease lock, which notes when the last
// successful acquisition or renewal was sent (the record's renew time is
// taken before the request too), and tells the watcher whenever the API
// server answers.
type renewals struct {
	resourcelock.Interface
	w       *watcher // told whether the API server answers
	mu      sync.Mutex
	last    time.Time // send time of the last successful Create or Update holding the lease
	renewed chan struct{}
}

// Get implements resourcelock.Interface.
func (l *renewals) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := l.Interface.Get(ctx)
	l.answer(err)
	return rec, raw, err
}

// Create implements resourcelock.Interface.
func (l *renewals) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := time.Now()
	err := l.Interface.Create(ctx, ler)
	l.done(sent, ler, err)
	return err
}

// Update implements resourcelock.Interface.
func (l *renewals) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := time.Now()
	err := l.Interface.Update(ctx, ler)
	l.done(sent, ler, err)
	return err
}

func (l *renewals) done(sent time.Time, ler resourcelock.LeaderElectionRecord, err error) {
	l.answer(err)
	if err != nil || ler.HolderIdentity != l.Identity() {
		return
	}
	l.mu.Lock()
	l.last = sent
	if l.renewed != nil {
		select {
		case l.renewed <- struct{}{}:
		default:
		}
	}
	l.mu.Unlock()
}

// answer tells the watcher whether the API server answered: a success or
// a status it returned (not found, conflict, forbidden…) is an answer; a
// failed connection, a timeout, or a server shutting down or overloaded
// (429, 5xx) is not.
func (l *renewals) answer(err error) {
	if l.w == nil {
		return
	}
	var st apierrors.APIStatus
	if err == nil || errors.As(err, &st) && st.Status().Code < 500 && st.Status().Code != 429 {
		l.w.answered()
		return
	}
	l.w.unanswered(err)
}

// watch calls overdue once deadline has passed since the send time of the
// last successful renewal, unless ctx ends first.
func (l *renewals) watch(ctx context.Context, deadline time.Duration, overdue func()) {
	l.mu.Lock()
	if l.renewed == nil {
		l.renewed = make(chan struct{}, 1)
	}
	renewed := l.renewed
	l.mu.Unlock()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		l.mu.Lock()
		left := time.Until(l.last.Add(deadline))
		l.mu.Unlock()
		if left <= 0 {
			overdue()
			return
		}
		t.Reset(left)
		select {
		case <-ctx.Done():
			return
		case <-renewed:
		case <-t.C:
		}
	}
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
