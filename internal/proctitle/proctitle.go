package proctitle

import (
	"os"
	"strings"
	"sync"
	"unsafe"
)

// maxTitle is SPT_MAXTITLE: the longest title written.
const maxTitle = 255

var state struct {
	mu   sync.Mutex
	arg0 string // argv[0] as started, copied
	area []byte // argv[0] .. the end of the contiguous argv and env strings
	nul  int    // the offset of argv[0]'s NUL (SPT.nul)
	argv int    // the length of the argv strings with their NULs
	set  bool   // the area was cleared once (SPT.reset)
}

// Arg0 is the executable as started (Redis's server.exec_argv[0]): the
// {title} of proc-title-template. os.Args[0] when Init was not called.
func Arg0() string {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.arg0 != "" {
		return state.arg0
	}
	if len(os.Args) > 0 {
		return os.Args[0]
	}
	return ""
}

// Init is spt_init: it must run first thing in main, before anything
// reads os.Args or the environment. The strings of os.Args, and the
// environment, point into the memory the kernel set up for the process
// (the runtime does not copy them); Init copies them (os.Args' strings,
// and the environment through Clearenv and Setenv) so that the memory can
// be reused for the title, then records it: argv[0] up to the end of the
// argv strings and of the environment strings that immediately follow
// them (only where they are contiguous, as spt_init). A string another
// package kept from os.Args during its init (flag's program name) would
// see the title; in this module none is used.
func Init() {
	state.mu.Lock()
	defer state.mu.Unlock()
	if len(os.Args) == 0 || state.area != nil {
		return
	}
	b0 := unsafe.StringData(os.Args[0])
	if b0 == nil {
		return
	}
	base := unsafe.Pointer(b0)
	end := len(os.Args[0]) + 1 // offsets from base
	nul := len(os.Args[0])
	extend := func(s string) bool {
		p := unsafe.StringData(s)
		if p == nil || unsafe.Pointer(p) != unsafe.Add(base, end) {
			return false
		}
		end += len(s) + 1
		return true
	}
	contiguous := true
	for _, a := range os.Args[1:] {
		if !extend(a) {
			contiguous = false
			break
		}
	}
	argv := end
	// The runtime copies the environment (os.Environ's strings are Go's
	// own), but the kernel laid its strings out right after argv's: the
	// area extends over those found there, in order, byte by byte (a
	// byte is read only after the one before it matched).
	env := os.Environ()
	if contiguous {
		for _, e := range env {
			if !at(unsafe.Add(base, end), e) {
				break
			}
			end += len(e) + 1
		}
	}
	state.arg0 = strings.Clone(os.Args[0])
	args := make([]string, len(os.Args))
	for i, a := range os.Args {
		args[i] = strings.Clone(a)
	}
	os.Args = args
	if end > argv {
		// C's environ (with cgo) still points at those strings: the
		// environment is set again from Go's copies (clearenv and setenv
		// in C; without cgo this only rebuilds Go's own).
		kv := make([][2]string, 0, len(env))
		for _, e := range env {
			if i := strings.IndexByte(e, '='); i > 0 {
				kv = append(kv, [2]string{e[:i], e[i+1:]})
			}
		}
		os.Clearenv()
		for _, p := range kv {
			if err := os.Setenv(p[0], p[1]); err != nil {
				end = argv // keep to argv
			}
		}
	}
	state.area = unsafe.Slice(b0, end)
	state.nul = nul
	state.argv = argv
}

// at reports whether the memory at p holds s and a NUL.
func at(p unsafe.Pointer, s string) bool {
	for i := 0; i <= len(s); i++ {
		b := *(*byte)(unsafe.Add(p, i))
		if i == len(s) {
			return b == 0
		}
		if b != s[i] {
			return false
		}
	}
	return true
}

// Set is setproctitle("%s", title): the title (at most 255 bytes, and
// what fits the area) replaces the argv strings. Without Init it does
// nothing.
func Set(title string) {
	state.mu.Lock()
	defer state.mu.Unlock()
	a := state.area
	if a == nil {
		return
	}
	if !state.set {
		clear(a)
		state.set = true
	} else {
		clear(a[:min(maxTitle+1, len(a))])
	}
	n := min(len(title), min(maxTitle+1, len(a))-1)
	copy(a, title[:n])
	// As setproctitle: a title shorter than argv[0] leaves a '.' where
	// argv[0] ended; one that ends there is followed by a space.
	if n < state.nul {
		a[state.nul] = '.'
	} else if n == state.nul && n+1 < len(a) {
		a[state.nul] = ' '
	}
}

// Area is the size of the memory the title can use (0 without Init).
func Area() int {
	state.mu.Lock()
	defer state.mu.Unlock()
	return len(state.area)
}
