package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestPendingRefusedPort: for a master whose port refuses connections,
// redis-sentinel 7.0.15 shows "master,disconnected" and
// link-pending-commands 2 (the PING and the INFO queued on the connection
// that failed; its CLIENT SETNAMEs are settled by the failure), then 3 once
// hellos are due (2 s after the master was added), the PUBLISH queued too.
func TestPendingRefusedPort(t *testing.T) {
	port, _ := startSentinel(t, fmt.Sprintf("sentinel monitor mym 127.0.0.1 %d 2\n", freePort(t)))
	ic := dialInfo(t, port)
	for _, n := range []string{"2", "3"} {
		waitFor(t, 10*time.Second, "link-pending-commands "+n, func() bool {
			return strings.Contains(ic.do("SENTINEL", "master", "mym"),
				"$5\r\nflags\r\n$19\r\nmaster,disconnected\r\n$21\r\nlink-pending-commands\r\n$1\r\n"+n+"\r\n")
		})
	}
}
