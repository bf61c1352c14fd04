package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"
)

// ServerBinEnv names the environment variable that selects the server binary
// under test instead of the freshly built ./cmd/vigil-server.
const ServerBinEnv = "VIGIL_SERVER_BIN"

// ServerBin is the server binary the specs start. The suite sets it before
// any spec runs: the gexec-built vigil-server, or $VIGIL_SERVER_BIN.
var ServerBin string

// Timeouts for polling. They bound waits; nothing is timed against them.
const (
	// StartTimeout bounds how long a server may take to answer PING.
	StartTimeout = 10 * time.Second
	// ExitTimeout bounds how long a process may take to exit once asked.
	ExitTimeout = 10 * time.Second
)

// IsRealRedis reports whether the binary under test is Redis itself
// (VIGIL_SERVER_BIN=/usr/bin/redis-server), for the few places where Vigil's
// documented output differs on purpose (its log line "Ready to accept
// connections tcp" is Redis 7.2's; 7.0 prints no transport).
func IsRealRedis() bool {
	return strings.HasPrefix(filepath.Base(ServerBin), "redis-server")
}

// FreePort returns a free loopback TCP port: from the kernel, or from the
// range VIGIL_TEST_PORTS names (ports.go). The port is released before it is
// returned, so another process may take it first; StartServer retries on
// "Address already in use".
func FreePort() int {
	GinkgoHelper()
	return FreePorts(1)
}

// TempDir makes a short temporary directory (unix socket paths are limited to
// 107 bytes, so GinkgoT().TempDir()'s long names are avoided) and removes it
// when the spec ends.
func TempDir() string {
	GinkgoHelper()
	dir, err := os.MkdirTemp("", "vigil-it-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	return dir
}

// ServerOptions says how to launch a server process.
type ServerOptions struct {
	// Config, when not empty, is written to Dir/server.conf and passed as the
	// first argument (the config file), before the directives.
	Config string
	// Args are extra `--directive value ...` arguments, applied after the
	// defaults (so they override them).
	Args []string
	// NoDefaults leaves out the default directives (--port, --save "",
	// --appendonly no, --dir, --logfile ""); Args are passed alone.
	NoDefaults bool
	// Dir is the working directory; a fresh temporary one when empty.
	Dir string
	// ReadyWhileLoading makes StartServerWith return once the server
	// answers at all, -LOADING included; by default it waits until the
	// start-up load from disk has ended (a replica's full sync may still
	// answer -LOADING), as a client that retries -LOADING would.
	ReadyWhileLoading bool
}

// Server is one server process started by a spec.
type Server struct {
	Bin     string
	Port    int
	Dir     string
	Args    []string // full command line after the binary
	LogPath string   // stdout and stderr of the process
	Session *gexec.Session
}

// Addr is the server's loopback TCP address.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// StartServer starts ServerBin with the default test directives plus args and
// waits until it answers PING. It is killed (SIGKILL) when the spec ends.
func StartServer(args ...string) *Server {
	GinkgoHelper()
	return StartServerWith(ServerOptions{Args: args})
}

// StartServerWith is StartServer with options. If the chosen port was taken
// meanwhile by another process it retries on a new port.
func StartServerWith(opts ServerOptions) *Server {
	GinkgoHelper()
	for attempt := 1; ; attempt++ {
		s := LaunchServer(opts)
		if s.waitReady(opts.ReadyWhileLoading) {
			return s
		}
		log := s.Log()
		if attempt < 3 && strings.Contains(log, "already in use") {
			fmt.Fprintf(GinkgoWriter, "port %d was taken, retrying\n", s.Port)
			continue
		}
		Fail(fmt.Sprintf("server %s %s did not answer PING (exit code %d); its output:\n%s",
			s.Bin, strings.Join(s.Args, " "), s.Session.ExitCode(), log))
	}
}

// LaunchServer starts the process without waiting for it to be ready (for
// specs that expect it to fail). The output goes to a log file; when the
// spec fails, the log is printed. The process is killed when the spec ends.
func LaunchServer(opts ServerOptions) *Server {
	GinkgoHelper()
	Expect(ServerBin).NotTo(BeEmpty(), "ServerBin is set by the suite")
	dir := opts.Dir
	if dir == "" {
		dir = TempDir()
	}
	s := &Server{Bin: ServerBin, Dir: dir}
	var args []string
	if opts.Config != "" {
		conf := filepath.Join(dir, "server.conf")
		Expect(os.WriteFile(conf, []byte(opts.Config), 0o644)).To(Succeed())
		args = append(args, conf)
	}
	if !opts.NoDefaults {
		s.Port = FreePort()
		args = append(args,
			"--port", strconv.Itoa(s.Port),
			"--bind", "127.0.0.1",
			"--save", "",
			"--appendonly", "no",
			"--dir", dir,
			"--logfile", "",
		)
	}
	args = append(args, opts.Args...)
	s.Port = portFromArgs(args, s.Port)
	s.Args = args

	logf, err := os.CreateTemp(dir, "server-*.log")
	Expect(err).NotTo(HaveOccurred())
	s.LogPath = logf.Name()
	cmd := exec.Command(s.Bin, args...)
	cmd.Dir = dir
	s.Session, err = gexec.Start(cmd, logf, logf)
	Expect(err).NotTo(HaveOccurred(), "starting %s", s.Bin)

	DeferCleanup(func() {
		if s.Session.ExitCode() == -1 {
			s.Session.Kill()
			Eventually(s.Session).WithTimeout(ExitTimeout).Should(gexec.Exit())
		}
		_ = logf.Close()
		if CurrentSpecReport().Failed() {
			fmt.Fprintf(GinkgoWriter, "\n---- %s %s (exit code %d); output:\n%s\n---- end of output\n",
				s.Bin, strings.Join(s.Args, " "), s.Session.ExitCode(), tail(s.Log(), 100))
		}
	})
	return s
}

// portFromArgs returns the value of the last --port in args, or def.
func portFromArgs(args []string, def int) int {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--port" {
			if p, err := strconv.Atoi(args[i+1]); err == nil {
				def = p
			}
		}
	}
	return def
}

// waitReady polls until the server answers PING (any reply, even an error
// such as NOAUTH, proves it serves; -LOADING only when loadingOK) or the
// process exits. It reports whether the server is ready.
func (s *Server) waitReady(loadingOK bool) bool {
	GinkgoHelper()
	probe := redis.NewClient(&redis.Options{
		Addr:            s.Addr(),
		Protocol:        2,
		DisableIdentity: true,
		MaxRetries:      -1,
		DialTimeout:     time.Second,
		ReadTimeout:     time.Second,
		PoolSize:        1,
	})
	defer probe.Close()
	ready := false
	Eventually(func() bool {
		if s.Session.ExitCode() != -1 {
			return true
		}
		err := probe.Ping(context.Background()).Err()
		var rerr redis.Error
		ready = err == nil || errors.As(err, &rerr)
		if ready && err != nil && !loadingOK && strings.HasPrefix(err.Error(), "LOADING") {
			// -LOADING from the start-up load: not ready until the log
			// says it ended ("Ready to accept connections", written after
			// loadDataFromDisk by both servers); a replica loading its
			// master's dataset later is ready.
			ready = strings.Contains(s.Log(), "Ready to accept connections")
		}
		return ready
	}).WithTimeout(StartTimeout).WithPolling(20*time.Millisecond).Should(BeTrue(),
		"server on port %d neither answered PING nor exited", s.Port)
	return ready && s.Session.ExitCode() == -1
}

// WaitReady fails the spec unless the server answers PING within StartTimeout
// (-LOADING counts).
func (s *Server) WaitReady() {
	GinkgoHelper()
	Expect(s.waitReady(true)).To(BeTrue(), "server exited before answering PING:\n%s", s.Log())
}

// Log returns everything the process wrote so far.
func (s *Server) Log() string {
	b, err := os.ReadFile(s.LogPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", s.LogPath, err)
	}
	return string(b)
}

// Terminate sends SIGTERM and waits for the process to exit; it returns the
// exit code.
func (s *Server) Terminate() int {
	GinkgoHelper()
	s.Session.Signal(syscall.SIGTERM)
	return s.WaitExit()
}

// Kill sends SIGKILL and waits for the process to exit.
func (s *Server) Kill() {
	GinkgoHelper()
	s.Session.Kill()
	s.WaitExit()
}

// WaitExit waits for the process to exit and returns its exit code.
func (s *Server) WaitExit() int {
	GinkgoHelper()
	Eventually(s.Session).WithTimeout(ExitTimeout).Should(gexec.Exit())
	return s.Session.ExitCode()
}

// ClientOptions returns go-redis options for this server: the given protocol
// (2 or 3), no retries (so a dropped connection is seen, not hidden) and
// short timeouts.
func (s *Server) ClientOptions(protocol int) *redis.Options {
	return &redis.Options{
		Addr:         s.Addr(),
		Protocol:     protocol,
		MaxRetries:   -1,
		DialTimeout:  2 * time.Second,
		ReadTimeout:  5 * time.Second,
		WriteTimeout: 5 * time.Second,
		PoolSize:     4,
	}
}

// Client returns a go-redis client of the given protocol, closed when the spec
// ends.
func (s *Server) Client(protocol int) *redis.Client {
	return NewClient(s.ClientOptions(protocol))
}

// NewClient returns a go-redis client closed when the spec ends.
func NewClient(opts *redis.Options) *redis.Client {
	c := redis.NewClient(opts)
	DeferCleanup(c.Close)
	return c
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines skipped)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
