package memory

// SetFastZoneFiles turns ReadZoneFile's fast reader of plain lines on or
// off, for tests comparing both ways; it returns the previous setting.
func SetFastZoneFiles(on bool) bool {
	old := fastZoneFiles
	fastZoneFiles = on
	return old
}
