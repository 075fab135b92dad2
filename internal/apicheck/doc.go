// Package apicheck holds a test over the module's exported API: no exported
// identifier outside internal/ may mention a type from an internal package
// in its signature, since users cannot name such a type.
//
// Its other tests keep one way to say an error: an invalid value given to
// every exported Validate of the listed packages is a *fielderr.Error under
// its package's "<pkg>: invalid …" sentinel, and every package-level
// errors.New sentinel there starts with its package name, starts lower
// case, ends without punctuation and, when exported, is named Err….
//
// The package has no code of its own; its test loads every public package's
// export data with go/types and walks each exported object.
package apicheck
