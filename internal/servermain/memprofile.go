package servermain

import (
	"os"
	"runtime"
	"strings"
)

// # No heap profile sampling
//
// The Go runtime samples one allocation per runtime.MemProfileRate bytes
// (512 KB by default) for the heap profile whenever the binary links
// runtime/pprof (vigil-server does, for DEBUG's CPU profile), and nothing
// here ever reads that profile. Each sample unwinds the allocating stack
// (reading the binary's function tables, which then stay resident) and
// keeps a record for good: about 200 of them in a 1 M-key `redis-cli
// --pipe` load. So sampling is off from this package's initialisation on,
// unless GODEBUG=memprofilerate=N asks for it (the runtime's own setting,
// honoured as it is; `go test -memprofile` sets its own rate afterwards).
func init() {
	if !strings.Contains(os.Getenv("GODEBUG"), "memprofilerate=") {
		runtime.MemProfileRate = 0
	}
}
