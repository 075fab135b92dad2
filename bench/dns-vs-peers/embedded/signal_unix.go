//go:build unix

package main

import (
	"os"
	"syscall"
)

// changeSignal makes the server apply its -changes file.
var changeSignal os.Signal = syscall.SIGUSR1
