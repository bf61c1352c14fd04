package server

import (
	"bufio"
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// TestUnauthenticatedOutputLimited is auth.tcl's "For unauthenticated
// clients output buffer is limited" (an external:skip test), on Vigil and
// redis-server 7.0.15 with requirepass: a client that has not
// authenticated and does not read its replies (-NOAUTH for each SET) is
// closed once more than 1kb waits past the 16kb static buffer
// (checkClientOutputBufferLimits' authRequired check), whatever
// client-output-buffer-limit says (0 0 0 for normal clients). Vigil kept
// running its commands and holding the replies, so the client was never
// closed.
func TestUnauthenticatedOutputLimited(t *testing.T) {
	const n = 200000
	l, dialRedis := startLiveBesideRedis(t, "--requirepass", "secret")
	scenario := func(c net.Conn) string {
		c.SetDeadline(time.Now().Add(20 * time.Second))
		// The replies are read only once the writer stops: when the
		// server closed the connection, or (not closed) the deadline.
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			var b bytes.Buffer
			for i := 0; i < 1000; i++ {
				b.WriteString("*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$1\r\n5\r\n")
			}
			for i := 0; i < n/1000; i++ {
				if _, err := c.Write(b.Bytes()); err != nil {
					return
				}
			}
		}()
		<-wrote
		br := bufio.NewReader(c)
		for i := 0; i < n; i++ {
			v, err := resp.ReadValue(br, resp.DefaultReplyLimits)
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					return "timeout"
				}
				return "closed"
			}
			if i == 0 && v.Str != "NOAUTH Authentication required." {
				return "first reply " + v.Str
			}
		}
		return "all replies read"
	}
	redis := scenario(dialRedis().c)
	vigil := scenario(l.dial(t).c)
	sameAsRedis(t, "unauthenticated client not reading", []string{redis}, []string{vigil}, []string{"closed"})
}
