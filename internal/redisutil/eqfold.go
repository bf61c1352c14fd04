package redisutil

// EqFold reports whether b equals the lower-case ASCII keyword lower,
// ASCII case-insensitively, as strcasecmp compares command options (no
// Unicode folding: "ſ" is not "s").
func EqFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != lower[i] {
			return false
		}
	}
	return true
}
