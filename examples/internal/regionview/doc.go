// Package regionview holds what the multiregion and kubernetes examples
// share about one region's view of the DNS (the shared global zone and the
// region's own copy of a local zone below it, mounted with
// provider.Mounts): Reads, which reads each store zone once per controller
// tick however many readers ask, and Server, which serves the view on
// 127.0.0.1 as one zone, the local zone grafted into the global one, so
// the embedded server follows a CNAME chain from the global zone into the
// local one in one answer. It is not part of the library's API: the
// examples' own code, said once.
package regionview
