package testutil

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RedisBin is the reference redis-server when it is installed (Debian's
// redis-server 7.0.15).
const RedisBin = "/usr/bin/redis-server"

// startLimit bounds the wait for redis-server to listen, and to load its
// dump.rdb with RedisOptions.WaitLoaded.
const startLimit = 20 * time.Second

// RedisOptions says how StartRedis runs redis-server.
type RedisOptions struct {
	// Dir is the working and data directory (--dir: a dump.rdb there is
	// loaded at start); a new temporary directory when empty.
	Dir string
	// TCP listens on a free loopback port (--bind 127.0.0.1) instead of a
	// unix socket (--port 0 --unixsocket).
	TCP bool
	// Args are more command-line directives ("--name", "value", ...), after
	// StartRedis's own, so they override them: --save "", --appendonly no,
	// --dir, --logfile and the listener's.
	Args []string
	// WaitLoaded waits until the server answers PING with +PONG (not
	// -LOADING): its dump.rdb is loaded. Without it, StartRedis only waits
	// until the socket accepts connections and makes no connection itself
	// on a unix socket (a probe would take a client id that CLIENT LIST
	// and CLIENT ID would show).
	WaitLoaded bool
}

// Redis is a redis-server started by StartRedis; the test's cleanup kills
// it.
type Redis struct {
	Dir  string // its --dir
	Sock string // its unix socket ("" with TCP)
	Port int    // its TCP port (0 without TCP)
	Cmd  *exec.Cmd
}

// NeedRedis skips t unless redis-server is installed, and returns its path.
func NeedRedis(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(RedisBin); err != nil {
		t.Skip("redis-server not installed: apt-get install -y redis-server redis-tools")
	}
	return RedisBin
}

// StartRedis starts redis-server as o says (skipping t when it is not
// installed) and returns once it accepts connections.
func StartRedis(t testing.TB, o RedisOptions) *Redis {
	t.Helper()
	bin := NeedRedis(t)
	r := &Redis{Dir: o.Dir}
	if r.Dir == "" {
		r.Dir = t.TempDir()
	}
	argv := []string{"--save", "", "--appendonly", "no", "--dir", r.Dir, "--logfile", filepath.Join(r.Dir, "redis.log")}
	if o.TCP {
		r.Port = FreePort(t)
		argv = append(argv, "--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1")
	} else {
		// A short directory of its own: a unix socket path holds at most
		// 107 bytes, and t.TempDir's names grow with the test's.
		sdir, err := os.MkdirTemp("", "vigil-redis-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(sdir) })
		r.Sock = filepath.Join(sdir, "redis.sock")
		argv = append(argv, "--port", "0", "--unixsocket", r.Sock)
	}
	r.Cmd = exec.Command(bin, append(argv, o.Args...)...)
	r.Cmd.Dir = r.Dir
	if err := r.Cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	t.Cleanup(func() {
		r.Cmd.Process.Kill()
		r.Cmd.Wait()
	})
	if r.Sock != "" && !o.WaitLoaded {
		// The socket file appears as redis-server listens; Dial retries
		// the moment in between.
		if !PollUntil(startLimit, func() bool { _, err := os.Stat(r.Sock); return err == nil }) {
			t.Fatalf("redis-server did not start:\n%s", r.Log())
		}
		return r
	}
	c := r.Dial(t)
	defer c.Close()
	if o.WaitLoaded {
		br := bufio.NewReader(c)
		ok := PollUntil(startLimit, func() bool {
			c.SetDeadline(time.Now().Add(startLimit))
			if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
				return false
			}
			line, err := br.ReadString('\n')
			return err == nil && line == "+PONG\r\n"
		})
		if !ok {
			t.Fatalf("redis-server still loading:\n%s", r.Log())
		}
	}
	return r
}

// Network and Addr are the address to dial: "unix" and the socket, or
// "tcp" and 127.0.0.1:port.
func (r *Redis) Network() string {
	if r.Sock != "" {
		return "unix"
	}
	return "tcp"
}

func (r *Redis) Addr() string {
	if r.Sock != "" {
		return r.Sock
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port))
}

// Dial connects to the server, retrying while it starts; the test's
// cleanup closes the connection.
func (r *Redis) Dial(t testing.TB) net.Conn {
	t.Helper()
	var c net.Conn
	var err error
	if !PollUntil(startLimit, func() bool { c, err = net.Dial(r.Network(), r.Addr()); return err == nil }) {
		t.Fatalf("redis-server did not start: %v\n%s", err, r.Log())
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Log is the server's log file so far.
func (r *Redis) Log() string {
	b, err := os.ReadFile(filepath.Join(r.Dir, "redis.log"))
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(b))
}

// FreePort returns a loopback TCP port nobody listened on a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
