package benchutil

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// SkipUnlessEnabled skips t unless VIGIL_BENCH=1: the benchmarks are long
// and load the machine. recipe is the Justfile recipe that runs it, what
// names the benchmark in the skip message.
func SkipUnlessEnabled(t *testing.T, recipe, what string) {
	t.Helper()
	if os.Getenv("VIGIL_BENCH") != "1" {
		t.Skipf("set VIGIL_BENCH=1 (%s) to run %s", recipe, what)
	}
}

// EnvInt is the positive integer in the environment variable name, or def
// when it is unset, not a number or not positive.
func EnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// FreePort is a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// WaitFor polls cond every 10 ms until it holds, failing t with "timed out
// waiting for what" after timeout.
func WaitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	testutil.Poll(t, timeout, what, cond)
}

// Binary is a server executable to benchmark: Name is "vigil" or "redis".
type Binary struct{ Name, Path string }

// Binaries builds ./cmd/vigil-server of this module into a temporary
// directory and returns it, followed by Debian's redis-server when it is
// installed (logging that it is not otherwise).
func Binaries(t *testing.T) []Binary {
	t.Helper()
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	vbin := filepath.Join(t.TempDir(), "vigil-server")
	build := exec.Command("go", "build", "-o", vbin, "./cmd/vigil-server")
	build.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	evictFromPageCache(vbin)
	bins := []Binary{{"vigil", vbin}}
	if rbin, err := exec.LookPath("redis-server"); err == nil {
		bins = append(bins, Binary{"redis", rbin})
	} else {
		t.Log("redis-server not installed (apt-get install -y redis-server redis-sentinel redis-tools): vigil only")
	}
	return bins
}

// Server is a server process started by Start, with a go-redis client on it.
type Server struct {
	Name   string
	Port   int
	Cmd    *exec.Cmd
	Client *redis.Client
}

// Start runs bin (vigil-server or redis-server) on a free loopback port
// with no RDB saves, no AOF, its own temporary --dir and a log file there,
// followed by args, and waits up to 30 s for it to answer PING. The client
// uses opts with Addr set to the server and Protocol 2 unless opts sets
// one. The process is killed and the client closed when t ends.
func Start(t *testing.T, name, bin string, opts redis.Options, args ...string) *Server {
	t.Helper()
	dir := t.TempDir()
	port := FreePort(t)
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "server.log")}, args...)
	cmd := exec.Command(bin, all...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	opts.Addr = "127.0.0.1:" + strconv.Itoa(port)
	if opts.Protocol == 0 {
		opts.Protocol = 2
	}
	c := redis.NewClient(&opts)
	t.Cleanup(func() { c.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &Server{Name: name, Port: port, Cmd: cmd, Client: c}
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// Stop kills the server process and waits for it (Start's cleanup then
// has nothing left to do).
func (s *Server) Stop() { s.Cmd.Process.Kill(); s.Cmd.Wait() }

// Key is the name of key i of a dataset: "key:<i>".
func Key(i int) string { return "key:" + strconv.Itoa(i) }

// ConstValue is a value function for Load: every key gets n bytes "x".
func ConstValue(n int) func(int) string {
	v := strings.Repeat("x", n)
	return func(int) string { return v }
}

// Load sets keys Key(0) .. Key(keys-1) to value(i) with MSETs of 1000 keys.
func (s *Server) Load(t *testing.T, keys int, value func(i int) string) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < keys; {
		args := []any{"MSET"}
		for j := 0; j < 1000 && i < keys; j, i = j+1, i+1 {
			args = append(args, Key(i), value(i))
		}
		if err := s.Client.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// Info is one INFO section of the server as field -> value; an error
// gives an empty map.
func (s *Server) Info(section string) map[string]string {
	info, _ := s.Client.Info(context.Background(), section).Result()
	return ParseInfo(info)
}

// ParseInfo splits an INFO reply into field -> value (header and blank
// lines have no ':' and are left out).
func ParseInfo(info string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// RSSKB is the server process's VmRSS in kB, 0 when it cannot be read
// (the parent process only: Redis's fork child is not counted).
func (s *Server) RSSKB() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.Cmd.Process.Pid))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// CPUTime is the user plus system CPU time the server process has used so
// far (utime+stime of /proc/<pid>/stat, in USER_HZ ticks of 10 ms), 0 when
// it cannot be read. Differences over a run give a server's CPU cost per
// request independent of how many cores it had to itself.
func (s *Server) CPUTime() time.Duration {
	return ProcCPUTime(s.Cmd.Process.Pid)
}

// ProcCPUTime is CPUTime of any process.
func ProcCPUTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after "(comm)": state is field 3, utime 14 and stime 15.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(ut+st) * tick
}

// evictFromPageCache writes path's pages out and drops them from the page
// cache (posix_fadvise DONTNEED), so that the server runs from the file
// read back as an installed binary is, not from the linker's freshly
// written pages: those are cached in large folios, and a fault on one maps
// all of it, so the startup's code pages that vigil-server drops once it
// is ready (internal/servermain/startpages_linux.go) came back 10 MB at a
// time, in RSS figures only a fresh build has.
func evictFromPageCache(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = f.Sync()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
