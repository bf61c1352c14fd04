package lua

import "testing"

// TestVMMemory: the heap estimate counts a fresh state, grows by what a
// script adds (a second copy of the same strings costs less: Lua interns
// them), and each object once.
func TestVMMemory(t *testing.T) {
	e := New(nil)
	base := e.VMMemory()
	if base < 10000 {
		t.Fatalf("fresh state: %d bytes", base)
	}
	code := "local t = {} for i = 1, #KEYS do t[i] = redis.call('GET', KEYS[i]) end return t"
	if msg := e.Compile("a", []byte(code), 0, false); msg != "" {
		t.Fatal(msg)
	}
	one := e.VMMemory() - base
	if msg := e.Compile("b", []byte(code+" "), 0, false); msg != "" {
		t.Fatal(msg)
	}
	two := e.VMMemory() - base - one
	if one <= 0 || two <= 0 || two >= one {
		t.Fatalf("first script %d bytes, second (same strings) %d", one, two)
	}
	if e.scripts["a"].fn.Env != e.env {
		t.Fatal("scripts share the env table")
	}
	// The env and globals were counted with the state, not again.
	if one > 2000 {
		t.Fatalf("a short script: %d bytes (counted the globals again?)", one)
	}
}
