package integration

import (
	"context"
	"errors"
	"io"
	"math/rand"
	"net"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Byte-exact protocol checks over a bare TCP socket: reply framing, protocol
// errors and hostile input.
var _ = Describe("RESP over a raw TCP socket", func() {
	var srv *Server

	BeforeEach(func() {
		srv = StartServer()
	})

	// alive checks, from a fresh connection, that the server still serves.
	alive := func() {
		GinkgoHelper()
		Expect(srv.Session.ExitCode()).To(Equal(-1), "the server process exited")
		c := DialRaw(srv.Addr())
		Expect(c.Do("PING")).To(Equal("+PONG\r\n"))
		Expect(c.Do("SET", "alive", "yes")).To(Equal("+OK\r\n"))
		Expect(c.Do("GET", "alive")).To(Equal("$3\r\nyes\r\n"))
	}

	Describe("reply framing", func() {
		It("encodes RESP2 replies", func() {
			c := DialRaw(srv.Addr())
			Expect(c.Do("SET", "k", "v")).To(Equal("+OK\r\n"))
			Expect(c.Do("GET", "k")).To(Equal("$1\r\nv\r\n"))
			Expect(c.Do("GET", "nosuch")).To(Equal("$-1\r\n"))
			Expect(c.Do("INCR", "n")).To(Equal(":1\r\n"))
			Expect(c.Do("MGET", "k", "nosuch")).To(Equal("*2\r\n$1\r\nv\r\n$-1\r\n"))
			Expect(c.Do("INCRBYFLOAT", "f", "1.5")).To(Equal("$3\r\n1.5\r\n"))
			Expect(c.Do("SET", "k", "w", "NX")).To(Equal("$-1\r\n"))
			Expect(c.Do("HELLO", "2")).To(HavePrefix("*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:2\r\n"))
		})

		It("encodes RESP3 replies after HELLO 3", func() {
			c := DialRaw(srv.Addr())
			hello := c.Do("HELLO", "3")
			Expect(hello).To(HavePrefix("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:"))
			Expect(hello).To(HaveSuffix("$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"))
			Expect(c.Do("GET", "nosuch")).To(Equal("_\r\n"))
			Expect(c.Do("SET", "k", "v")).To(Equal("+OK\r\n"))
			Expect(c.Do("MGET", "k", "nosuch")).To(Equal("*2\r\n$1\r\nv\r\n_\r\n"))
			Expect(c.Do("CONFIG", "GET", "port")).To(Equal("%1\r\n$4\r\nport\r\n" + bulk(strconv.Itoa(srv.Port))))
			Expect(c.Do("INFO", "server")).To(HavePrefix("="))
			Expect(c.Do("HELLO", "4")).To(Equal("-NOPROTO unsupported protocol version\r\n"))
			Expect(c.Do("HELLO", "2")).To(HavePrefix("*14\r\n"))
			Expect(c.Do("GET", "nosuch")).To(Equal("$-1\r\n"))
		})

		It("sends pub/sub messages as RESP2 arrays and RESP3 pushes", func() {
			pub := DialRaw(srv.Addr())
			s2 := DialRaw(srv.Addr())
			Expect(s2.Do("SUBSCRIBE", "ch")).To(Equal("*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"))
			Expect(s2.Do("PING")).To(Equal("*2\r\n$4\r\npong\r\n$0\r\n\r\n"))
			Expect(s2.Do("GET", "k")).To(Equal("-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n"))

			s3 := DialRaw(srv.Addr())
			Expect(s3.Do("HELLO", "3")).To(HavePrefix("%7\r\n"))
			Expect(s3.Do("SUBSCRIBE", "ch")).To(Equal(">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"))
			Expect(s3.Do("PSUBSCRIBE", "c*")).To(Equal(">3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:2\r\n"))
			Expect(s3.Do("PING")).To(Equal("+PONG\r\n"))
			// RESP3 lets a subscribed client run any command.
			Expect(s3.Do("SET", "k", "v")).To(Equal("+OK\r\n"))

			Expect(pub.Do("PUBLISH", "ch", "hello")).To(Equal(":3\r\n"))
			Expect(s2.Reply()).To(Equal("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n"))
			Expect([]string{s3.Reply(), s3.Reply()}).To(ConsistOf(
				">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n",
				">4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$5\r\nhello\r\n",
			))
			Expect(s2.Do("UNSUBSCRIBE")).To(Equal("*3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:0\r\n"))
			Expect(s2.Do("PING")).To(Equal("+PONG\r\n"))
		})

		It("parses inline commands", func() {
			c := DialRaw(srv.Addr())
			c.Send("SET k \"hello world\"\r\nGET k\r\n")
			Expect(c.Reply()).To(Equal("+OK\r\n"))
			Expect(c.Reply()).To(Equal("$11\r\nhello world\r\n"))
			c.Send("  PING  \n") // a bare \n ends an inline command too
			Expect(c.Reply()).To(Equal("+PONG\r\n"))
			c.Send("\r\n\r\nEXISTS k 'k' \"\\x6b\"\r\n") // empty lines are skipped
			Expect(c.Reply()).To(Equal(":3\r\n"))
		})
	})

	Describe("bad input", func() {
		It("rejects a negative bulk length and closes the connection", func() {
			c := DialRaw(srv.Addr())
			c.Send("*1\r\n$-5\r\n")
			Expect(c.Reply()).To(Equal("-ERR Protocol error: invalid bulk length\r\n"))
			c.ExpectClosed()
			alive()
		})

		It("rejects an oversized bulk length and closes the connection", func() {
			c := DialRaw(srv.Addr())
			c.Send("*1\r\n$999999999999\r\n")
			Expect(c.Reply()).To(Equal("-ERR Protocol error: invalid bulk length\r\n"))
			c.ExpectClosed()
			alive()
		})

		It("rejects a non-numeric bulk length and closes the connection", func() {
			c := DialRaw(srv.Addr())
			c.Send("*1\r\n$abc\r\n")
			Expect(c.Reply()).To(Equal("-ERR Protocol error: invalid bulk length\r\n"))
			c.ExpectClosed()
		})

		It("ignores empty and negative multibulk counts, as Redis does", func() {
			c := DialRaw(srv.Addr())
			c.Send("*0\r\n*-1\r\n*-10\r\nPING\r\n")
			Expect(c.Reply()).To(Equal("+PONG\r\n"))
			Expect(c.Do("PING")).To(Equal("+PONG\r\n"))
		})

		It("rejects an oversized multibulk count and closes the connection", func() {
			c := DialRaw(srv.Addr())
			c.Send("*99999999999\r\n")
			Expect(c.Reply()).To(Equal("-ERR Protocol error: invalid multibulk length\r\n"))
			c.ExpectClosed()
			alive()
		})

		It("rejects something else where a bulk string goes and closes the connection", func() {
			c := DialRaw(srv.Addr())
			c.Send("*1\r\n+PING\r\n")
			Expect(c.Reply()).To(Equal("-ERR Protocol error: expected '$', got '+'\r\n"))
			c.ExpectClosed()
		})

		It("rejects unbalanced quotes in an inline command and closes the connection", func() {
			c := DialRaw(srv.Addr())
			c.Send("SET k \"abc\r\n")
			Expect(c.Reply()).To(Equal("-ERR Protocol error: unbalanced quotes in request\r\n"))
			c.ExpectClosed()
		})

		It("rejects a non-integer where an integer goes and keeps the connection", func() {
			c := DialRaw(srv.Addr())
			Expect(c.Do("SET", "k", "v", "EX", "abc")).To(Equal("-ERR value is not an integer or out of range\r\n"))
			Expect(c.Do("SET", "k", "v", "EX", "99999999999999999999")).To(Equal("-ERR value is not an integer or out of range\r\n"))
			Expect(c.Do("INCRBY", "k", "1.5")).To(Equal("-ERR value is not an integer or out of range\r\n"))
			Expect(c.Do("EXISTS", "k")).To(Equal(":0\r\n"))
		})

		It("rejects unknown commands with Redis's text", func() {
			c := DialRaw(srv.Addr())
			Expect(c.Do("x")).To(Equal("-ERR unknown command 'x', with args beginning with: \r\n"))
			Expect(c.Do("x", "a", "b c")).To(Equal("-ERR unknown command 'x', with args beginning with: 'a' 'b c' \r\n"))
			long := strings.Repeat("y", 200)
			Expect(c.Do("x", long, "z")).To(Equal("-ERR unknown command 'x', with args beginning with: '" + long[:128] + "' \r\n"))
			c.Send("FOO bar\r\n")
			Expect(c.Reply()).To(Equal("-ERR unknown command 'FOO', with args beginning with: 'bar' \r\n"))
		})

		It("rejects the wrong number of arguments with Redis's text", func() {
			c := DialRaw(srv.Addr())
			Expect(c.Do("GET")).To(Equal("-ERR wrong number of arguments for 'get' command\r\n"))
			Expect(c.Do("SeT", "k")).To(Equal("-ERR wrong number of arguments for 'set' command\r\n"))
			Expect(c.Do("MGET")).To(Equal("-ERR wrong number of arguments for 'mget' command\r\n"))
			Expect(c.Do("CLIENT", "SETNAME")).To(Equal("-ERR wrong number of arguments for 'client|setname' command\r\n"))
			Expect(c.Do("PING")).To(Equal("+PONG\r\n"))
		})

		It("survives 10 MB of random bytes", Label("slow"), func() {
			const total = 10 << 20
			rng := rand.New(rand.NewSource(GinkgoRandomSeed()))
			chunk := make([]byte, 64<<10)
			written, conns := 0, 0
			for written < total && conns < 2000 {
				conns++
				conn, err := net.DialTimeout("tcp", srv.Addr(), 2*time.Second)
				Expect(err).NotTo(HaveOccurred())
				// Drain the replies so that neither side blocks on a full buffer.
				drained := make(chan struct{})
				go func() {
					defer close(drained)
					_, _ = io.Copy(io.Discard, conn)
				}()
				for written < total {
					rng.Read(chunk)
					_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
					n, err := conn.Write(chunk)
					written += n
					if err != nil {
						var ne net.Error
						Expect(errors.As(err, &ne) && ne.Timeout()).To(BeFalse(),
							"the server stopped reading without closing the connection")
						break
					}
				}
				_ = conn.Close()
				Eventually(drained).WithTimeout(10 * time.Second).Should(BeClosed())
			}
			AddReportEntry("random input", map[string]int{"bytes": written, "connections": conns})
			alive()
			rdb := srv.Client(3)
			Expect(rdb.Ping(context.Background()).Result()).To(Equal("PONG"))
		})
	})
})

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
