package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// deniedText is Redis 7.0.15's protected-mode refusal, byte for byte (the
// "Setup a an" typo included: clients and scripts match on it).
const deniedText = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

// Process lifecycle, limits, authentication and configuration of a server.
var _ = Describe("Server lifecycle", func() {
	var ctx context.Context

	BeforeEach(func() {
		ctx = context.Background()
	})

	It("logs its startup lines", func() {
		srv := StartServer()
		ready := "Ready to accept connections" // 7.0 names no transport
		Eventually(srv.Log).WithTimeout(StartTimeout).Should(And(
			ContainSubstring("monotonic clock: POSIX clock_gettime"), // initServer's
			ContainSubstring("Server initialized"),
			ContainSubstring(ready),
		))
	})

	It("exits 0 on SIGTERM and removes its pidfile", func() {
		dir := TempDir()
		pidfile := filepath.Join(dir, "server.pid")
		srv := StartServerWith(ServerOptions{Dir: dir, Args: []string{"--pidfile", pidfile}})
		pid := strconv.Itoa(srv.Session.Command.Process.Pid)
		Eventually(func() (string, error) {
			b, err := os.ReadFile(pidfile)
			return strings.TrimSpace(string(b)), err
		}).WithTimeout(StartTimeout).Should(Equal(pid))

		Expect(srv.Terminate()).To(Equal(0))
		Expect(pidfile).NotTo(BeAnExistingFile())
		Expect(srv.Log()).To(ContainSubstring("Received SIGTERM scheduling shutdown"))
	})

	It("exits 0 on SHUTDOWN NOSAVE", func() {
		srv := StartServer()
		rdb := srv.Client(3)
		Expect(rdb.Set(ctx, "k", "v", 0).Err()).To(Succeed())
		// The server closes the connection instead of replying (go-redis
		// reports that as success); an error reply would be a failure.
		var rerr redis.Error
		Expect(errors.As(rdb.ShutdownNoSave(ctx).Err(), &rerr)).To(BeFalse())
		Expect(srv.WaitExit()).To(Equal(0))
		Expect(filepath.Join(srv.Dir, "dump.rdb")).NotTo(BeAnExistingFile())
	})

	It("refuses a connection beyond maxclients", func() {
		srv := StartServer("--maxclients", "2")
		// accepted dials until the server accepts a connection: the
		// readiness probe's connection may not be reaped yet.
		accepted := func() *RawConn {
			GinkgoHelper()
			var c *RawConn
			Eventually(func() string {
				c = DialRaw(srv.Addr())
				r, _ := c.TryDo("PING")
				return r
			}).WithTimeout(5 * time.Second).Should(Equal("+PONG\r\n"))
			return c
		}
		c1 := accepted()
		accepted()
		c3 := DialRaw(srv.Addr())
		Expect(c3.Reply()).To(Equal("-ERR max number of clients reached\r\n"))
		c3.ExpectClosed()

		Expect(c1.Close()).To(Succeed())
		accepted() // the freed slot is reused
	})

	It("closes a client idle for longer than timeout", func() {
		srv := StartServer("--timeout", "1")
		idle := DialRaw(srv.Addr())
		Expect(idle.Do("PING")).To(Equal("+PONG\r\n"))
		Eventually(idle.Closed).WithTimeout(10*time.Second).WithPolling(50*time.Millisecond).Should(BeTrue(),
			"an idle client is closed after timeout 1")
		rdb := srv.Client(3)
		Expect(rdb.Ping(ctx).Result()).To(Equal("PONG"))
	})

	It("requires AUTH with requirepass", func() {
		srv := StartServer("--requirepass", "s3cret")
		c := DialRaw(srv.Addr())
		Expect(c.Do("GET", "k")).To(Equal("-NOAUTH Authentication required.\r\n"))
		Expect(c.Do("HELLO", "3")).To(Equal("-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n"))
		Expect(c.Do("AUTH", "wrong")).To(Equal("-WRONGPASS invalid username-password pair or user is disabled.\r\n"))
		Expect(c.Do("AUTH", "default", "wrong")).To(Equal("-WRONGPASS invalid username-password pair or user is disabled.\r\n"))
		Expect(c.Do("AUTH", "s3cret")).To(Equal("+OK\r\n"))
		Expect(c.Do("GET", "k")).To(Equal("$-1\r\n"))

		c2 := DialRaw(srv.Addr())
		Expect(c2.Do("HELLO", "3", "AUTH", "default", "s3cret")).To(HavePrefix("%7\r\n"))
		Expect(c2.Do("SET", "k", "v")).To(Equal("+OK\r\n"))

		for _, proto := range []int{2, 3} {
			By(fmt.Sprintf("go-redis Protocol %d", proto))
			anon := srv.Client(proto)
			Expect(anon.Get(ctx, "k").Err()).To(MatchError("NOAUTH Authentication required."))
			opts := srv.ClientOptions(proto)
			opts.Password = "s3cret"
			authed := NewClient(opts)
			Expect(authed.Get(ctx, "k").Result()).To(Equal("v"))
			opts = srv.ClientOptions(proto)
			opts.Password = "wrong"
			Expect(NewClient(opts).Ping(ctx).Err()).To(MatchError(
				"WRONGPASS invalid username-password pair or user is disabled."))
		}
	})

	It("refuses non-loopback clients in protected mode without a password", func() {
		ip := LocalIPv4()
		if ip == "" {
			Skip("this machine has no non-loopback IPv4 address")
		}
		srv := StartServer("--bind", "127.0.0.1", ip, "--protected-mode", "yes")
		outside := DialRaw(net.JoinHostPort(ip, strconv.Itoa(srv.Port)))
		Expect(outside.Reply()).To(Equal(deniedText))
		outside.ExpectClosed()
		// Loopback clients are served.
		Expect(srv.Client(3).Ping(ctx).Result()).To(Equal("PONG"))

		open := StartServer("--bind", "127.0.0.1", ip, "--protected-mode", "no")
		c := DialRaw(net.JoinHostPort(ip, strconv.Itoa(open.Port)))
		Expect(c.Do("PING")).To(Equal("+PONG\r\n"))
	})

	It("serves go-redis over a unix socket", func() {
		dir := TempDir()
		sock := filepath.Join(dir, "vigil.sock")
		srv := StartServerWith(ServerOptions{Dir: dir, Args: []string{"--unixsocket", sock, "--unixsocketperm", "700"}})
		fi, err := os.Stat(sock)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode() & os.ModeSocket).NotTo(BeZero())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o700)))

		for _, proto := range []int{2, 3} {
			unix := NewClient(&redis.Options{Network: "unix", Addr: sock, Protocol: proto, MaxRetries: -1})
			Expect(unix.Set(ctx, "via", "unix"+strconv.Itoa(proto), 0).Err()).To(Succeed())
			Expect(srv.Client(3).Get(ctx, "via").Result()).To(Equal("unix" + strconv.Itoa(proto)))
		}
		raw := DialRawNetwork("unix", sock)
		Expect(raw.Do("PING")).To(Equal("+PONG\r\n"))
	})

	It("lets --directive flags override the config file", func() {
		filePort := FreePort()
		srv := StartServerWith(ServerOptions{
			Config: fmt.Sprintf("# test config\nport %d\nmaxclients 100\ntimeout 50\ndatabases 4\n", filePort),
			Args:   []string{"--maxclients", "77"},
		})
		Expect(srv.Port).NotTo(Equal(filePort))
		rdb := srv.Client(3)
		Expect(rdb.ConfigGet(ctx, "maxclients").Result()).To(Equal(map[string]string{"maxclients": "77"}))
		Expect(rdb.ConfigGet(ctx, "timeout").Result()).To(Equal(map[string]string{"timeout": "50"}))
		Expect(rdb.ConfigGet(ctx, "databases").Result()).To(Equal(map[string]string{"databases": "4"}))
		Expect(rdb.ConfigGet(ctx, "port").Result()).To(Equal(map[string]string{"port": strconv.Itoa(srv.Port)}))
		Expect(rdb.Do(ctx, "SELECT", "4").Err()).To(MatchError("ERR DB index is out of range"))
	})

	It("exits 1 on a bad directive in the config file, naming the line", func() {
		srv := LaunchServer(ServerOptions{
			Config:     "port 0\nsave \"\"\nbogus-directive yes\n",
			NoDefaults: true,
		})
		Expect(srv.WaitExit()).To(Equal(1))
		stderr := string(srv.Session.Err.Contents())
		Expect(stderr).To(ContainSubstring("*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***"))
		Expect(stderr).To(ContainSubstring("Reading the configuration file, at line 3"))
		Expect(stderr).To(ContainSubstring(">>> 'bogus-directive yes'"))
		Expect(stderr).To(ContainSubstring("Bad directive or wrong number of arguments"))
	})

	It("exits 1 on a bad --directive value", func() {
		srv := LaunchServer(ServerOptions{Args: []string{"--maxclients", "abc"}})
		Expect(srv.WaitExit()).To(Equal(1))
		stderr := string(srv.Session.Err.Contents())
		Expect(stderr).To(ContainSubstring("*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***"))
		Expect(stderr).To(ContainSubstring(">>> 'maxclients \"abc\"'"))
		Expect(stderr).To(ContainSubstring("argument couldn't be parsed into an integer"))
	})
})
