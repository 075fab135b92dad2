//go:build !unix

package main

import "os"

// changeSignal is nil where there is no SIGUSR1: -changes is not applied.
var changeSignal os.Signal
