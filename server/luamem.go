package server

import "sync"

// The Lua heaps INFO reports (used_memory_vm_eval, used_memory_vm_functions:
// Redis's lua_gc(LUA_GCCOUNT)), estimated in Lua 5.1's sizes by the engine
// (server/lua/memory.go). Redis creates both VMs at startup; Vigil creates
// each on first use, so until then the figure is that of a fresh one,
// measured once.

var freshVM struct {
	once            sync.Once
	eval, functions int64
}

func (s *Server) freshVMMemory() (eval, functions int64) {
	freshVM.once.Do(func() {
		h := s.newLuaHost(evalClientID)
		freshVM.eval = h.e.VMMemory()
		h.e.Close()
		f := s.newFunctionsEngine()
		freshVM.functions = f.h.e.FunctionsVMMemory(nil)
		f.h.e.Close()
	})
	return freshVM.eval, freshVM.functions
}

// evalVMMemory is used_memory_vm_eval.
func (s *Server) evalVMMemory() int64 {
	if s.lua == nil {
		eval, _ := s.freshVMMemory()
		return eval
	}
	return s.lua.e.VMMemory()
}

// functionsVMMemory is used_memory_vm_functions.
func (s *Server) functionsVMMemory() int64 {
	if s.fns == nil {
		_, functions := s.freshVMMemory()
		return functions
	}
	return s.fns.h.e.FunctionsVMMemory(s.fns.cur.funcs)
}
