package redistext

import (
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

var (
	hostOnce    sync.Once
	hostOS      string
	hostBuildID string
)

// HostInfo is what INFO's server section says of the host and the build:
// os (uname's sysname, release and machine, read from /proc where there is
// one) and redis_build_id (the first 16 hex digits of the VCS revision, "0"
// when the binary carries none).
func HostInfo() (osName, buildID string) {
	hostOnce.Do(func() {
		sys, rel := runtime.GOOS, ""
		if b, err := os.ReadFile("/proc/sys/kernel/ostype"); err == nil {
			sys = strings.TrimSpace(string(b))
		}
		if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
			rel = strings.TrimSpace(string(b))
		}
		machine := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686"}[runtime.GOARCH]
		if machine == "" {
			machine = runtime.GOARCH
		}
		hostOS = strings.Join(strings.Fields(sys+" "+rel+" "+machine), " ")
		hostBuildID = "0"
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, st := range bi.Settings {
				if st.Key == "vcs.revision" && len(st.Value) >= 16 {
					hostBuildID = st.Value[:16]
				}
			}
		}
	})
	return hostOS, hostBuildID
}

// MultiplexingAPI names the event mechanism under Go's netpoller, as
// INFO's multiplexing_api does for Redis's ae backend.
func MultiplexingAPI() string {
	switch runtime.GOOS {
	case "linux":
		return "epoll"
	case "darwin", "freebsd", "netbsd", "openbsd", "dragonfly":
		return "kqueue"
	}
	return "go"
}
