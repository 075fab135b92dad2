package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

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
// Timing: the leader renews every retry period; when it cannot renew
// within the renew deadline it gives the lease up and its term's context
// ends, so its loops stop writing. A candidate acquires the lease only
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
		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: r.cfg.namespace, Name: r.cfg.leaseName},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		}
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
			return err
		}
		r.problems.clear("no_leader")
		le.Run(ctx) // returns when the lease is lost or ctx ends
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

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
