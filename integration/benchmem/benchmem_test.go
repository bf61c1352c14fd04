package benchmem

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type server struct {
	name string
	cmd  *exec.Cmd
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

func start(t *testing.T, name, bin string) *server {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "server.log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{name: name, cmd: cmd}
	t.Cleanup(s.stop)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			s.conn, s.r, s.w = c, bufio.NewReaderSize(c, 1<<16), bufio.NewWriterSize(c, 1<<16)
			if rep, err := s.do("PING"); err == nil && rep == "+PONG" {
				return s
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *server) stop() {
	if s.conn != nil {
		s.conn.Close()
	}
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}

func (s *server) write(args ...string) {
	fmt.Fprintf(s.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(s.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

// reply reads one reply and returns its first line (bulk payloads and
// aggregates are consumed and summarised by that line).
func (s *server) reply() (string, error) {
	line, err := s.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch line[0] {
	case '-':
		return line, fmt.Errorf("%s: %s", s.name, line)
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n >= 0 {
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(s.r, buf); err != nil {
				return "", err
			}
			return string(buf[:n]), nil
		}
	case '*':
		n, _ := strconv.Atoi(line[1:])
		for i := 0; i < n; i++ {
			if _, err := s.reply(); err != nil {
				return "", err
			}
		}
	}
	return line, nil
}

func (s *server) do(args ...string) (string, error) {
	s.write(args...)
	if err := s.w.Flush(); err != nil {
		return "", err
	}
	return s.reply()
}

// pipeline sends cmds commands built by gen (i from 0 to cmds-1) in
// batches of 1000, reading the replies of each batch after sending it.
func (s *server) pipeline(t *testing.T, cmds int, gen func(i int) []string) {
	t.Helper()
	for i := 0; i < cmds; i += 1000 {
		end := min(i+1000, cmds)
		for j := i; j < end; j++ {
			s.write(gen(j)...)
		}
		if err := s.w.Flush(); err != nil {
			t.Fatal(err)
		}
		for j := i; j < end; j++ {
			if _, err := s.reply(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// rssKB is VmRSS of the server process.
func (s *server) rssKB() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// usedMemory is INFO memory's used_memory in bytes.
func (s *server) usedMemory() int64 {
	s.write("INFO", "memory")
	s.w.Flush()
	info, err := s.reply()
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// dataset is one load: cmds pipelined commands, the i-th built by gen,
// adding n elements in all.
type dataset struct {
	name string
	cmds func(n int) int
	gen  func(n, i int) []string
}

// batch is the number of elements per HSET, SADD or ZADD command.
const batch = 100

func datasets() []dataset {
	batched := func(n int) int { return (n + batch - 1) / batch }
	return []dataset{
		{"strings", func(n int) int { return n }, func(_, i int) []string {
			return []string{"SET", "key:" + strconv.Itoa(i), "value:" + strconv.Itoa(i)}
		}},
		{"hash", batched, func(n, i int) []string {
			args := []string{"HSET", "hash"}
			for j := i * batch; j < min((i+1)*batch, n); j++ {
				args = append(args, "field:"+strconv.Itoa(j), "value:"+strconv.Itoa(j))
			}
			return args
		}},
		{"set", batched, func(n, i int) []string {
			args := []string{"SADD", "set"}
			for j := i * batch; j < min((i+1)*batch, n); j++ {
				args = append(args, "member:"+strconv.Itoa(j))
			}
			return args
		}},
		{"zset", batched, func(n, i int) []string {
			args := []string{"ZADD", "zset"}
			for j := i * batch; j < min((i+1)*batch, n); j++ {
				args = append(args, strconv.Itoa(j), "member:"+strconv.Itoa(j))
			}
			return args
		}},
	}
}

type result struct {
	rssBase, rss int64 // kB: before and after the load
	used         int64 // INFO used_memory after the load, bytes
	load         time.Duration
}

func measure(t *testing.T, name, bin string, ds dataset, n int) result {
	s := start(t, name, bin)
	defer s.stop()
	var res result
	res.rssBase = s.rssKB()
	t0 := time.Now()
	s.pipeline(t, ds.cmds(n), func(i int) []string { return ds.gen(n, i) })
	res.load = time.Since(t0)
	res.rss = s.rssKB()
	res.used = s.usedMemory()
	return res
}

func TestBenchMem(t *testing.T) {
	if os.Getenv("VIGIL_BENCH") != "1" {
		t.Skip("set VIGIL_BENCH=1 (just bench-mem) to run the memory benchmark")
	}
	n := envInt("VIGIL_BENCH_N", 1000000)
	vbin := os.Getenv("VIGIL_SERVER_BIN")
	if vbin == "" {
		root, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			t.Fatal(err)
		}
		vbin = filepath.Join(t.TempDir(), "vigil-server")
		build := exec.Command("go", "build", "-o", vbin, "./cmd/vigil-server")
		build.Dir = filepath.Dir(strings.TrimSpace(string(root)))
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	rbin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Log("redis-server not installed (apt-get install -y redis-server redis-sentinel redis-tools): vigil only")
	}
	want := map[string]bool{}
	for _, d := range strings.Split(os.Getenv("VIGIL_BENCH_DATASETS"), ",") {
		if d != "" {
			want[d] = true
		}
	}
	type row struct {
		name         string
		vigil, redis result
	}
	var rows []row
	for _, ds := range datasets() {
		if len(want) > 0 && !want[ds.name] {
			continue
		}
		r := row{name: ds.name}
		r.vigil = measure(t, "vigil", vbin, ds, n)
		if rbin != "" {
			r.redis = measure(t, "redis", rbin, ds, n)
		}
		t.Logf("%s: vigil loaded in %v, redis in %v", ds.name, r.vigil.load.Round(time.Millisecond), r.redis.load.Round(time.Millisecond))
		rows = append(rows, r)
	}
	mb := func(kb int64) float64 { return float64(kb) / 1024 }
	fmt.Printf("\nMemory benchmark: %d elements per dataset; RSS after the load (empty server's RSS), used_memory\n", n)
	fmt.Printf("%-8s %22s %22s %8s   %s\n", "dataset", "vigil RSS MB", "redis RSS MB", "ratio", "used_memory MB vigil / redis")
	for _, r := range rows {
		ratio := "-"
		if r.redis.rss > 0 {
			ratio = fmt.Sprintf("%.2fx", float64(r.vigil.rss)/float64(r.redis.rss))
		}
		fmt.Printf("%-8s %12.1f (%6.1f) %12.1f (%6.1f) %8s   %.1f / %.1f\n", r.name,
			mb(r.vigil.rss), mb(r.vigil.rssBase), mb(r.redis.rss), mb(r.redis.rssBase), ratio,
			float64(r.vigil.used)/(1<<20), float64(r.redis.used)/(1<<20))
	}
}
