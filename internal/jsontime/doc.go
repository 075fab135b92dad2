// Package jsontime holds the Duration type that configs across gslbkit use:
// it reads and writes Go duration strings such as "3s" or "1m30s" in JSON.
// Packages re-export it as an alias (type Duration = jsontime.Duration) so
// users can name it from the package they configure.
package jsontime
