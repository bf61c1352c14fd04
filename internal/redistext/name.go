package redistext

// ValidClientName is clientSetName's check: printable ASCII without spaces
// ('!' to '~'); the empty name (which clears the name) passes.
func ValidClientName[T ~string | ~[]byte](name T) bool {
	for i := 0; i < len(name); i++ {
		if name[i] < '!' || name[i] > '~' {
			return false
		}
	}
	return true
}
