package replication

// SetJournalCompactMin sets the journal size below which a replica never
// rewrites its copy, for a test; the returned func puts it back.
func SetJournalCompactMin(n int64) (restore func()) {
	old := journalCompactMin
	journalCompactMin = n
	return func() { journalCompactMin = old }
}
