package server

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestScriptsEvalMemoryVsRedis (interop): INFO's used_memory_scripts_eval
// (evalScriptsMemory: the cached scripts' sha and body strings, a dictEntry and a luaScript each, the dict's slots) equal
// redis-server 7.0.15's as scripts of 8 bytes to 32 KB are loaded by
// SCRIPT LOAD and EVAL, across the dict's growth from 4 to 32 slots, and
// after SCRIPT FLUSH. (Once the dict has grown, a few lookups finish
// Redis's rehash before the figures are read: until then Redis also counts
// the old table's slots.)
func TestScriptsEvalMemoryVsRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	d := newListDiff(t) // list_diff_helper_test.go: Vigil's test server beside redis-server
	field := regexp.MustCompile(`(?m)^(used_memory_scripts_eval|number_of_cached_scripts):(\d+)\r$`)
	figures := func(info string) string {
		return strings.Join(field.FindAllString(info, -1), " ")
	}
	check := func(what string, shas []string) {
		t.Helper()
		for range 12 { // rehash steps (dictFind)
			d.same(append([]string{"SCRIPT", "EXISTS"}, shas...)...)
		}
		got, want := d.run("INFO", "memory")
		if figures(got) != figures(want) {
			t.Fatalf("%s: vigil %q, redis %q", what, figures(got), figures(want))
		}
	}
	check("no scripts", []string{"0000000000000000000000000000000000000000"})
	var shas []string
	// Not 32 KB or more: Redis then keeps the connection's query buffer as
	// the body, whose size depends on what the connection read before.
	lens := []int{8, 20, 44, 45, 60, 200, 255, 256, 300, 1000, 5000, 32767}
	for i := 0; i < 30; i++ {
		n := lens[i%len(lens)]
		body := "return " + strconv.Itoa(i) + " --"
		body += strings.Repeat("x", max(0, n-len(body)))
		if i%3 == 2 {
			d.same("EVAL", body, "0")
			shas = append(shas, strings.TrimSpace(strings.TrimPrefix(d.same("SCRIPT", "LOAD", body), "$40")))
		} else {
			shas = append(shas, strings.TrimSpace(strings.TrimPrefix(d.same("SCRIPT", "LOAD", body), "$40")))
		}
		check("after script "+strconv.Itoa(i)+" of "+strconv.Itoa(len(body))+" bytes", shas)
	}
	d.same("SCRIPT", "FLUSH")
	check("after SCRIPT FLUSH", shas)
	d.same("SCRIPT", "LOAD", "return 'again'")
	check("a script after SCRIPT FLUSH", shas)
}
