package errclass

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
)

type status int

func (s status) Error() string   { return fmt.Sprintf("status %d", int(s)) }
func (s status) StatusCode() int { return int(s) }

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return false }

func TestOf(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, None},
		{"plain", errors.New("boom"), Permanent},
		{"marked throttled", Mark(errors.New("slow down"), Throttled), Throttled},
		{"marked transient wrapped", fmt.Errorf("ctx: %w", Mark(errors.New("x"), Transient)), Transient},
		{"marked permanent", Mark(errors.New("x"), Permanent), Permanent},
		{"429", status(429), Throttled},
		{"503", fmt.Errorf("call: %w", status(503)), Transient},
		{"404", status(404), Permanent},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), Transient},
		{"canceled", context.Canceled, Permanent},
		{"net timeout", &net.OpError{Op: "read", Err: timeoutErr{}}, Transient},
		{"refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, Transient},
		{"reset", syscall.ECONNRESET, Transient},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Of(c.err); got != c.want {
				t.Fatalf("Of(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

func TestMarkBehaviour(t *testing.T) {
	base := errors.New("base")
	err := Mark(base, Throttled)
	if !errors.Is(err, base) {
		t.Fatal("Mark does not unwrap")
	}
	var th interface{ Throttled() bool }
	if !errors.As(err, &th) || !th.Throttled() {
		t.Fatal("throttled mark not visible")
	}
	if Mark(nil, Transient) != nil {
		t.Fatal("Mark(nil) != nil")
	}
	if !Transient.Retryable() || Permanent.Retryable() {
		t.Fatal("Retryable")
	}
}
