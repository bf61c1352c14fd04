package integration

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"
)

// ToolTimeout bounds a run of redis-cli or redis-benchmark.
const ToolTimeout = 60 * time.Second

// RunTool runs name with args and stdin to completion and returns the session
// (Out and Err hold its output).
func RunTool(stdin io.Reader, name string, args ...string) *gexec.Session {
	GinkgoHelper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = stdin
	s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		if s.ExitCode() == -1 {
			s.Kill().Wait(ExitTimeout)
		}
	})
	Eventually(s).WithTimeout(ToolTimeout).Should(gexec.Exit(), "%s %s did not finish", name, strings.Join(args, " "))
	return s
}

// Debian's redis-cli and redis-benchmark against the server under test.
var _ = Describe("Redis tools", Label("interop"), func() {
	var (
		ctx   context.Context
		srv   *Server
		rdb   *redis.Client
		cli   string
		port  string
		clif  func(stdin string, args ...string) string
		check func(s *gexec.Session) string
	)

	BeforeEach(func() {
		cli = RequireRedisCLI()
		ctx = context.Background()
		srv = StartServer()
		port = strconv.Itoa(srv.Port)
		rdb = srv.Client(3)
		check = func(s *gexec.Session) string {
			GinkgoHelper()
			Expect(s.ExitCode()).To(BeZero(), "stderr: %s", s.Err.Contents())
			return string(s.Out.Contents())
		}
		// clif runs redis-cli -p port args with stdin and returns its stdout.
		clif = func(stdin string, args ...string) string {
			GinkgoHelper()
			return check(RunTool(strings.NewReader(stdin), cli, append([]string{"-p", port}, args...)...))
		}
	})

	Describe("redis-cli", func() {
		It("runs commands piped into it", func() {
			Expect(clif("SET a b\n")).To(Equal("OK\n")) // echo "SET a b" | redis-cli -p N
			Expect(rdb.Get(ctx, "a").Result()).To(Equal("b"))
			Expect(clif("SET a c\nGET a\nINCR n\nGET nosuch\nSET q \"hello world\"\n")).
				To(Equal("OK\nc\n1\n\nOK\n"))
			Expect(rdb.Get(ctx, "q").Result()).To(Equal("hello world"))
			Expect(rdb.Get(ctx, "n").Result()).To(Equal("1"))
			Expect(clif("NOSUCH x\nPING\n")).To(Equal(
				"ERR unknown command 'NOSUCH', with args beginning with: 'x' \n\nPONG\n"))
		})

		It("formats replies with --no-raw and --raw", func() {
			Expect(rdb.Set(ctx, "nl", "x\ny", 0).Err()).To(Succeed())
			Expect(clif("", "--no-raw", "GET", "nl")).To(Equal("\"x\\ny\"\n"))
			Expect(clif("", "--raw", "GET", "nl")).To(Equal("x\ny\n"))
			Expect(clif("", "--no-raw", "MGET", "nl", "nosuch")).To(Equal("1) \"x\\ny\"\n2) (nil)\n"))
			Expect(clif("", "--no-raw", "INCR", "cnt")).To(Equal("(integer) 1\n"))
			Expect(clif("", "--raw", "INCR", "cnt")).To(Equal("2\n"))
			Expect(clif("", "--no-raw", "GET", "nosuch")).To(Equal("(nil)\n"))
			Expect(clif("", "--no-raw", "NOSUCH", "a")).To(Equal(
				"(error) ERR unknown command 'NOSUCH', with args beginning with: 'a' \n"))
			Expect(clif("", "--no-raw", "CONFIG", "GET", "port")).To(Equal("1) \"port\"\n2) \"" + port + "\"\n"))
			Expect(clif("", "-3", "--no-raw", "CONFIG", "GET", "port")).To(Equal("1# \"port\" => \"" + port + "\"\n"))
			Expect(clif("", "-3", "--no-raw", "GET", "nosuch")).To(Equal("(nil)\n"))
		})

		It("mass-inserts 100k keys with --pipe", Label("slow"), func() {
			const n = 100000
			var in bytes.Buffer
			for i := 0; i < n; i++ {
				k := "key:" + strconv.Itoa(i)
				v := "value:" + strconv.Itoa(i)
				in.WriteString(EncodeCommand("SET", k, v))
			}
			s := RunTool(&in, cli, "-p", port, "--pipe")
			out := check(s)
			Expect(out).To(ContainSubstring("errors: 0, replies: 100000"))
			Expect(rdb.DBSize(ctx).Result()).To(Equal(int64(n)))
			Expect(rdb.MGet(ctx, "key:0", "key:54321", "key:99999").Result()).
				To(Equal([]interface{}{"value:0", "value:54321", "value:99999"}))
		})

		It("counts error replies in --pipe mode", func() {
			in := EncodeCommand("SET", "a", "1") + EncodeCommand("INCR", "a") + EncodeCommand("NOSUCH") + EncodeCommand("GET")
			s := RunTool(strings.NewReader(in), cli, "-p", port, "--pipe")
			Expect(s.ExitCode()).To(Equal(1), "redis-cli --pipe exits 1 when there were errors")
			Expect(string(s.Out.Contents())).To(ContainSubstring("errors: 2, replies: 4"))
			Expect(string(s.Err.Contents())).To(Equal("ERR unknown command 'NOSUCH', with args beginning with: \n" +
				"ERR wrong number of arguments for 'get' command\n"))
			Expect(rdb.Get(ctx, "a").Result()).To(Equal("2"))
		})

		It("reads COMMAND DOCS", func() {
			out := clif("", "--no-raw", "COMMAND", "DOCS", "GET")
			Expect(out).To(ContainSubstring("\"summary\""))
			Expect(out).To(ContainSubstring("\"Get the value of a key\""))
			Expect(out).To(ContainSubstring("\"arguments\""))
		})

		It("keeps working in interactive mode after fetching COMMAND DOCS", func() {
			script := RequireTool("script", "apt-get install -y bsdutils")
			// script(1) gives redis-cli a terminal, so it starts its
			// interactive mode, which asks for COMMAND DOCS to build its
			// hints. TERM=dumb keeps linenoise from querying the terminal.
			cmd := exec.Command(script, "-qec", "redis-cli -p "+port, "/dev/null")
			cmd.Env = append(cmd.Environ(), "TERM=dumb")
			stdin, err := cmd.StdinPipe()
			Expect(err).NotTo(HaveOccurred())
			s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() {
				if s.ExitCode() == -1 {
					s.Kill().Wait(ExitTimeout)
				}
			})
			_, err = io.WriteString(stdin, "SET inter active\r\n")
			Expect(err).NotTo(HaveOccurred())
			Eventually(s.Out).WithTimeout(10 * time.Second).Should(gbytes.Say(`127\.0\.0\.1:` + port + `> OK`))
			_, err = io.WriteString(stdin, "GET inter\r\n")
			Expect(err).NotTo(HaveOccurred())
			Eventually(s.Out).WithTimeout(10 * time.Second).Should(gbytes.Say(`"active"`))
			_, err = io.WriteString(stdin, "exit\r\n")
			Expect(err).NotTo(HaveOccurred())
			Expect(stdin.Close()).To(Succeed())
			Eventually(s).WithTimeout(10 * time.Second).Should(gexec.Exit(0))

			info, err := rdb.Info(ctx, "commandstats").Result()
			Expect(err).NotTo(HaveOccurred())
			Expect(info).To(MatchRegexp(`cmdstat_command\|docs:calls=[1-9]`), "redis-cli asked for COMMAND DOCS")
			Expect(rdb.Get(ctx, "inter").Result()).To(Equal("active"))
		})
	})

	Describe("redis-benchmark", func() {
		var bench string
		BeforeEach(func() {
			bench = RequireTool("redis-benchmark", "apt-get install -y redis-tools")
		})

		rps := func(out, test string) {
			GinkgoHelper()
			re := regexp.MustCompile(`(?m)(^|\r)` + regexp.QuoteMeta(test) + `: [0-9.]+ requests per second`)
			Expect(re.MatchString(out)).To(BeTrue(), "no %s result in:\n%s", test, out)
		}

		It("runs SET and GET", Label("slow"), func() {
			out := check(RunTool(nil, bench, "-p", port, "-t", "set,get", "-n", "20000", "-q"))
			rps(out, "SET")
			rps(out, "GET")
			Expect(rdb.StrLen(ctx, "key:__rand_int__").Result()).To(Equal(int64(3))) // -d 3: a 3-byte value
		})

		It("runs pipelined SET, GET, INCR and MSET", Label("slow"), func() {
			out := check(RunTool(nil, bench, "-p", port, "-t", "set,get,incr,mset", "-n", "20000", "-P", "16", "-q"))
			for _, t := range []string{"SET", "GET", "INCR", "MSET (10 keys)"} {
				rps(out, t)
			}
			Expect(rdb.Get(ctx, "counter:__rand_int__").Result()).To(Equal("20000"))
		})
	})
})
