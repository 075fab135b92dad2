// Package envfill fills a config's empty string fields from environment
// variables, the one way the provider adapters' FromEnv read them: a field
// already set wins, a variable's value is trimmed of white space, and the
// first variable set among a field's names is taken.
package envfill
