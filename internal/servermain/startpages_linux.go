package servermain

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// # Dropping the startup's code pages from the resident set
//
// Starting vigil-server runs every linked package's initialisation (the
// Prometheus client, protobuf descriptors, the command table, Lua's
// library), which touches code and read-only data all over the binary; with
// the kernel's fault-around (64 KB around each fault), 13 MB of the 16 MB
// binary's text and read-only data ends up mapped, where the serving path
// needs a fraction of that. Those pages are clean page cache shared with
// every process mapping the file, but RSS counts them, and RSS is what users
// compare with redis-server's (12 MB idle, vigil-server 16.9 MB).
//
// So once the server is ready, dropStartupPages unmaps the process's
// read-only file-backed mappings (MADV_DONTNEED: the page-table entries go,
// the page cache keeps the pages): what the server runs afterwards faults
// back in from the page cache (a minor fault, no I/O), and RSS counts what is
// in use. A mapping is left alone unless it is private, not writable, backed
// by a file and holds no anonymous (copied-on-write) page, for which
// MADV_DONTNEED would discard data rather than a mapping of the file.
//
// It runs again each time the server's idle collection has run after a
// burst of writes (Server.SetIdleRelease): a `redis-cli --pipe` load of 1 M
// keys leaves 7-8 MB of the binary resident (the function tables the
// collector and the stack unwinding read, fault-around's neighbours), where
// the idle server then needs well under 1 MB. The first commands after
// that fault the serving path back in from the page cache (minor faults,
// about a hundred, once per idle period after a burst).
func dropStartupPages() (dropped int64) {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	type mapping struct {
		lo, hi uintptr
		ok     bool
		rss    int64
	}
	var cur mapping
	flush := func() {
		if !cur.ok || cur.hi <= cur.lo {
			return
		}
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, cur.lo, cur.hi-cur.lo, unix.MADV_DONTNEED)
		if errno == 0 {
			dropped += cur.rss
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			flush()
			cur = mapping{}
			lo, hi, found := strings.Cut(f[0], "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			if !found || err1 != nil || err2 != nil || len(f) < 6 {
				continue
			}
			perms := f[1]
			cur = mapping{lo: uintptr(l), hi: uintptr(h),
				ok: len(perms) == 4 && perms[1] == '-' && perms[3] == 'p' && strings.HasPrefix(f[5], "/")}
			continue
		}
		switch f[0] {
		case "Rss:":
			if len(f) >= 2 {
				cur.rss, _ = strconv.ParseInt(f[1], 10, 64)
				cur.rss <<= 10
			}
		case "Anonymous:", "Swap:":
			if len(f) >= 2 && f[1] != "0" {
				cur.ok = false
			}
		}
	}
	flush()
	return dropped
}
