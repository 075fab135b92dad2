//go:build !linux

package main

import "errors"

func countSYNs(base, n int, ready chan<- error) {
	ready <- errors.New("SYN counting needs Linux")
}
