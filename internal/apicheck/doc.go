// Package apicheck holds a test over the module's exported API: no exported
// identifier outside internal/ may mention a type from an internal package
// in its signature, since users cannot name such a type.
//
// The package has no code of its own; its test loads every public package's
// export data with go/types and walks each exported object.
package apicheck
