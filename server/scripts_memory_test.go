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

// TestLuaVMMemoryVsRedis: used_memory_vm_eval and used_memory_vm_functions
// are an estimate of the Lua heap in Lua 5.1's sizes (server/lua/memory.go),
// not redis-server's allocator count: a fresh VM, and what 100 scripts or
// a library add, come within a factor of two of redis-server's figures
// after a full collection (Redis's own include uncollected garbage); SCRIPT
// FLUSH and FUNCTION DELETE take them back.
func TestLuaVMMemoryVsRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	d := newListDiff(t)
	field := func(info, name string) int64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + name + `:(\d+)\r$`).FindStringSubmatch(info)
		if m == nil {
			t.Fatalf("no %s in %q", name, info)
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	figures := func(name string) (vigil, redis int64) {
		t.Helper()
		d.same("EVAL", "return 1", "0")
		d.run("EVAL", "collectgarbage() return 1", "0") // a full collection, in Redis's VM
		got, want := d.run("INFO", "memory")
		return field(got, name), field(want, name)
	}
	near := func(what string, v, r int64) {
		t.Helper()
		if v*2 < r || v > 2*r {
			t.Errorf("%s: vigil %d, redis %d: not within a factor of 2", what, v, r)
		}
	}
	v0, r0 := figures("used_memory_vm_eval")
	near("a fresh eval VM", v0, r0)
	for i := range 100 {
		d.same("SCRIPT", "LOAD", "local t = {} for i = 1, #KEYS do t[i] = redis.call('GET', KEYS[i]) .. 'x"+strconv.Itoa(i)+"' end return t")
	}
	v1, r1 := figures("used_memory_vm_eval")
	near("100 scripts", v1-v0, r1-r0)
	d.same("SCRIPT", "FLUSH")
	if v, _ := figures("used_memory_vm_eval"); v != v0 {
		t.Errorf("after SCRIPT FLUSH: %d, fresh %d", v, v0)
	}

	f0, g0 := figures("used_memory_vm_functions")
	near("a fresh functions VM", f0, g0)
	lib := "#!lua name=lib1\n"
	for i := range 20 {
		lib += "redis.register_function('f" + strconv.Itoa(i) + "', function(keys, args) local t = {} for i = 1, #keys do t[i] = redis.call('GET', keys[i]) end return t end)\n"
	}
	d.same("FUNCTION", "LOAD", lib)
	f1, g1 := figures("used_memory_vm_functions")
	if f1 <= f0 {
		t.Errorf("a library of 20 functions: %d, fresh %d", f1, f0)
	}
	_ = g1 // Redis keeps the library's garbage until a collection of its functions VM, which no command runs
	d.same("FUNCTION", "DELETE", "lib1")
	if f, _ := figures("used_memory_vm_functions"); f != f0 {
		t.Errorf("after FUNCTION DELETE: %d, fresh %d", f, f0)
	}
}
