package server

import "testing"

// TestFlushallSaveResetsDirty is other.tcl's "FLUSHALL should reset the
// dirty counter to 0 if we enable save" and "... should not reset the
// dirty counter if we disable save" (external:skip), on Vigil and
// redis-server 7.0.15: with save points, FLUSHALL saves the empty dataset
// (flushAllDataAndResetRDB's rdbSave) and rdb_changes_since_last_save is 0
// after it; without, it counts the keys FLUSHALL removed. Vigil kept the
// counter through the save.
func TestFlushallSaveResetsDirty(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t, "--save", "")
	scenario := func(c *rconn) []string {
		var out []string
		changes := func() { out = append(out, liveInfoField(t, c, "persistence", "rdb_changes_since_last_save")) }
		out = append(out, c.do("SET", "a", "1"), c.do("SET", "b", "2"), c.do("FLUSHALL"))
		changes()
		out = append(out, c.do("CONFIG", "SET", "save", "3600 1 300 100 60 10000"), c.do("SET", "key", "value"), c.do("FLUSHALL"))
		changes()
		out = append(out, c.do("SET", "key", "value"))
		changes()
		return out
	}
	want := []string{"+OK", "+OK", "+OK", "4", "+OK", "+OK", "+OK", "0", "+OK", "1"}
	sameAsRedis(t, "FLUSHALL and the dirty counter", scenario(dialRedis()), scenario(l.dial(t)), want)
}
