package keyspace

import "github.com/vigil-kv/vigil/internal/redisutil"

// GlobMatch reports whether s matches the glob pattern: util.c's
// stringmatchlen (redisutil.StringMatch).
func GlobMatch(pattern, s []byte, nocase bool) bool { return redisutil.StringMatch(pattern, s, nocase) }

// GlobMatchString is GlobMatch for a string subject; it does not allocate.
func GlobMatchString(pattern []byte, s string, nocase bool) bool {
	return redisutil.StringMatch(pattern, s, nocase)
}
