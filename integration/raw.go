package integration

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// RawConn is a bare TCP (or unix) connection for byte-exact protocol checks:
// what a client library would hide (reply types, framing, closes).
type RawConn struct {
	net.Conn
	r *bufio.Reader
}

// ReplyTimeout bounds the wait for one reply on a RawConn.
const ReplyTimeout = 5 * time.Second

// DialRaw connects to addr ("host:port") over TCP; the connection is closed
// when the spec ends.
func DialRaw(addr string) *RawConn {
	GinkgoHelper()
	return DialRawNetwork("tcp", addr)
}

// DialRawNetwork connects over network ("tcp" or "unix").
func DialRawNetwork(network, addr string) *RawConn {
	GinkgoHelper()
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	Expect(err).NotTo(HaveOccurred(), "dialing %s %s", network, addr)
	DeferCleanup(func() { _ = c.Close() })
	return &RawConn{Conn: c, r: bufio.NewReaderSize(c, 64*1024)}
}

// Send writes s as is.
func (c *RawConn) Send(s string) {
	GinkgoHelper()
	Expect(c.SetWriteDeadline(time.Now().Add(ReplyTimeout))).To(Succeed())
	_, err := io.WriteString(c.Conn, s)
	Expect(err).NotTo(HaveOccurred(), "writing %q", s)
}

// Command sends args as a RESP multibulk request.
func (c *RawConn) Command(args ...string) {
	GinkgoHelper()
	c.Send(EncodeCommand(args...))
}

// Do sends a command and returns its raw reply.
func (c *RawConn) Do(args ...string) string {
	GinkgoHelper()
	c.Command(args...)
	return c.Reply()
}

// TryDo sends a command and reads its reply, returning errors instead of
// failing the spec (for connections the server may refuse or close).
func (c *RawConn) TryDo(args ...string) (string, error) {
	if err := c.SetWriteDeadline(time.Now().Add(ReplyTimeout)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c.Conn, EncodeCommand(args...)); err != nil {
		return "", err
	}
	return c.TryReply()
}

// Reply reads one complete reply and returns its exact bytes (nested
// aggregates included), failing the spec on a read error.
func (c *RawConn) Reply() string {
	GinkgoHelper()
	s, err := c.TryReply()
	Expect(err).NotTo(HaveOccurred(), "reading a reply (got %q so far)", s)
	return s
}

// TryReply reads one complete reply within ReplyTimeout.
func (c *RawConn) TryReply() (string, error) {
	if err := c.SetReadDeadline(time.Now().Add(ReplyTimeout)); err != nil {
		return "", err
	}
	var b strings.Builder
	err := readReply(c.r, &b)
	return b.String(), err
}

// Closed reports whether the peer closed the connection: it reads with a
// short deadline and returns true on EOF or a reset. Data read on the way is
// discarded. Use it inside Eventually.
func (c *RawConn) Closed() bool {
	_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	buf := make([]byte, 4096)
	_, err := c.r.Read(buf)
	if err == nil {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true // io.EOF, ECONNRESET, ...
}

// ExpectClosed waits (polling) until the server closes the connection.
func (c *RawConn) ExpectClosed() {
	GinkgoHelper()
	Eventually(c.Closed).WithTimeout(ReplyTimeout).WithPolling(time.Millisecond).Should(BeTrue(),
		"the server should close the connection")
}

// EncodeCommand encodes args as a RESP multibulk request.
func EncodeCommand(args ...string) string {
	var b strings.Builder
	b.WriteString("*")
	b.WriteString(strconv.Itoa(len(args)))
	b.WriteString("\r\n")
	for _, a := range args {
		b.WriteString("$")
		b.WriteString(strconv.Itoa(len(a)))
		b.WriteString("\r\n")
		b.WriteString(a)
		b.WriteString("\r\n")
	}
	return b.String()
}

// readReply copies one RESP2/RESP3 reply from r to out.
func readReply(r *bufio.Reader, out *strings.Builder) error {
	line, err := r.ReadString('\n')
	out.WriteString(line)
	if err != nil {
		return err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return fmt.Errorf("malformed reply line %q", line)
	}
	head, body := line[0], line[1:len(line)-2]
	switch head {
	case '+', '-', ':', '_', ',', '#', '(':
		return nil
	case '$', '!', '=':
		n, err := strconv.Atoi(body)
		if err != nil {
			return fmt.Errorf("bad length in %q", line)
		}
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		k, err := io.ReadFull(r, buf)
		out.Write(buf[:k])
		return err
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil {
			return fmt.Errorf("bad length in %q", line)
		}
		if head == '%' || head == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := readReply(r, out); err != nil {
				return err
			}
		}
		if head == '|' { // an attribute precedes the actual reply
			return readReply(r, out)
		}
		return nil
	default:
		return fmt.Errorf("unknown reply type in %q", line)
	}
}

// LocalIPv4 returns a non-loopback IPv4 address of this machine, or "" when it
// has none.
func LocalIPv4() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return ""
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				if ip4 := ipn.IP.To4(); ip4 != nil && !ip4.IsLoopback() && !ip4.IsLinkLocalUnicast() {
					return ip4.String()
				}
			}
		}
	}
	return ""
}

// RequireTool skips the spec when name is not on PATH and returns its path.
func RequireTool(name, install string) string {
	GinkgoHelper()
	p, err := exec.LookPath(name)
	if err != nil {
		Skip(fmt.Sprintf("%s not found: install with %s", name, install))
	}
	return p
}

// RequireRedisCLI skips unless redis-cli is installed and returns its path.
func RequireRedisCLI() string {
	GinkgoHelper()
	return RequireTool("redis-cli", "apt-get install -y redis-tools")
}
