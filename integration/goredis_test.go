package integration

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// The server-core behaviour seen through go-redis v9, once per protocol.
// Every write made with one client is checked with an independent client (a
// separate connection pool speaking the other protocol).
var _ = Describe("go-redis v9 client", func() {
	for _, proto := range []int{3, 2} {
		Context(fmt.Sprintf("Protocol %d", proto), func() {
			var (
				ctx   context.Context
				srv   *Server
				rdb   *redis.Client // the client under test
				other *redis.Client // the independent checker
			)

			BeforeEach(func() {
				ctx = context.Background()
				srv = StartServer()
				rdb = srv.Client(proto)
				other = srv.Client(5 - proto)
			})

			It("answers PING and ECHO", func() {
				Expect(rdb.Ping(ctx).Result()).To(Equal("PONG"))
				Expect(rdb.Do(ctx, "PING", "hi").Result()).To(Equal("hi"))
				Expect(rdb.Echo(ctx, "a\r\nb").Result()).To(Equal("a\r\nb"))
			})

			It("SETs and GETs binary-safe values", func() {
				Expect(rdb.Set(ctx, "k", "v", 0).Result()).To(Equal("OK"))
				Expect(other.Get(ctx, "k").Result()).To(Equal("v"))
				bin := "a\r\nb\x00c\xff"
				Expect(rdb.Set(ctx, "bin", bin, 0).Err()).To(Succeed())
				Expect(other.Get(ctx, "bin").Result()).To(Equal(bin))
				Expect(rdb.Set(ctx, "empty", "", 0).Err()).To(Succeed())
				Expect(other.Get(ctx, "empty").Result()).To(Equal(""))
				_, err := other.Get(ctx, "nosuch").Result()
				Expect(err).To(Equal(redis.Nil))
			})

			It("honours SET EX, PX, NX, XX, GET and KEEPTTL", func() {
				By("EX")
				Expect(rdb.Set(ctx, "ex", "v", 100*time.Second).Err()).To(Succeed())
				Expect(other.TTL(ctx, "ex").Val()).To(BeNumerically("~", 100*time.Second, 2*time.Second))

				By("PX")
				Expect(rdb.Do(ctx, "SET", "px", "v", "PX", "100000").Err()).To(Succeed())
				Expect(other.PTTL(ctx, "px").Val()).To(BeNumerically("~", 100*time.Second, 2*time.Second))

				By("NX")
				Expect(rdb.SetNX(ctx, "nx", "1", 0).Result()).To(BeTrue())
				Expect(rdb.SetNX(ctx, "nx", "2", 0).Result()).To(BeFalse())
				Expect(rdb.Do(ctx, "SET", "nx", "3", "NX").Err()).To(Equal(redis.Nil))
				Expect(other.Get(ctx, "nx").Result()).To(Equal("1"))

				By("XX")
				Expect(rdb.SetXX(ctx, "xx", "1", 0).Result()).To(BeFalse())
				Expect(other.Exists(ctx, "xx").Result()).To(BeZero())
				Expect(rdb.Set(ctx, "xx", "0", 0).Err()).To(Succeed())
				Expect(rdb.SetXX(ctx, "xx", "2", 0).Result()).To(BeTrue())
				Expect(other.Get(ctx, "xx").Result()).To(Equal("2"))

				By("GET")
				Expect(rdb.Do(ctx, "SET", "g", "v1", "GET").Err()).To(Equal(redis.Nil))
				Expect(rdb.Do(ctx, "SET", "g", "v2", "GET").Result()).To(Equal("v1"))
				Expect(other.Get(ctx, "g").Result()).To(Equal("v2"))
				Expect(rdb.Do(ctx, "SET", "g", "v3", "NX", "GET").Result()).To(Equal("v2"))
				Expect(other.Get(ctx, "g").Result()).To(Equal("v2"))

				By("KEEPTTL")
				Expect(rdb.Set(ctx, "kt", "a", 100*time.Second).Err()).To(Succeed())
				Expect(rdb.Do(ctx, "SET", "kt", "b", "KEEPTTL").Err()).To(Succeed())
				Expect(other.Get(ctx, "kt").Result()).To(Equal("b"))
				Expect(other.TTL(ctx, "kt").Val()).To(BeNumerically("~", 100*time.Second, 2*time.Second))
				Expect(rdb.Set(ctx, "kt", "c", 0).Err()).To(Succeed())
				Expect(other.TTL(ctx, "kt").Val()).To(Equal(time.Duration(-1)))

				By("bad options")
				Expect(rdb.Do(ctx, "SET", "k", "v", "NX", "XX").Err()).To(MatchError("ERR syntax error"))
				Expect(rdb.Do(ctx, "SET", "k", "v", "EX", "10", "PX", "100").Err()).To(MatchError("ERR syntax error"))
				Expect(rdb.Do(ctx, "SET", "k", "v", "EX", "0").Err()).To(MatchError("ERR invalid expire time in 'set' command"))
				Expect(rdb.Do(ctx, "SET", "k", "v", "PX", "-5").Err()).To(MatchError("ERR invalid expire time in 'set' command"))
				Expect(rdb.Do(ctx, "SET", "k", "v", "EX", "abc").Err()).To(MatchError("ERR value is not an integer or out of range"))
				Expect(other.Exists(ctx, "k").Val()).To(BeZero())
			})

			It("INCRs, DECRs and INCRBYFLOATs", func() {
				Expect(rdb.Incr(ctx, "n").Result()).To(Equal(int64(1)))
				Expect(rdb.IncrBy(ctx, "n", 10).Result()).To(Equal(int64(11)))
				Expect(rdb.Decr(ctx, "n").Result()).To(Equal(int64(10)))
				Expect(rdb.DecrBy(ctx, "n", 15).Result()).To(Equal(int64(-5)))
				Expect(other.Get(ctx, "n").Result()).To(Equal("-5"))

				Expect(rdb.Set(ctx, "f", "10.5", 0).Err()).To(Succeed())
				Expect(rdb.IncrByFloat(ctx, "f", 0.1).Result()).To(Equal(10.6))
				Expect(other.Get(ctx, "f").Result()).To(Equal("10.6"))
				Expect(rdb.Set(ctx, "e", "5.0e3", 0).Err()).To(Succeed())
				Expect(rdb.Do(ctx, "INCRBYFLOAT", "e", "2.0e2").Text()).To(Equal("5200"))
				Expect(other.Get(ctx, "e").Result()).To(Equal("5200"))
				Expect(rdb.IncrByFloat(ctx, "newf", -1.5).Result()).To(Equal(-1.5))
				Expect(other.Get(ctx, "newf").Result()).To(Equal("-1.5"))

				Expect(rdb.Set(ctx, "s", "abc", 0).Err()).To(Succeed())
				Expect(rdb.Incr(ctx, "s").Err()).To(MatchError("ERR value is not an integer or out of range"))
				Expect(rdb.IncrByFloat(ctx, "s", 1).Err()).To(MatchError("ERR value is not a valid float"))
				Expect(rdb.Set(ctx, "max", "9223372036854775807", 0).Err()).To(Succeed())
				Expect(rdb.Incr(ctx, "max").Err()).To(MatchError("ERR increment or decrement would overflow"))
				Expect(other.Get(ctx, "max").Result()).To(Equal("9223372036854775807"))
				Expect(rdb.Set(ctx, "sp", " 1", 0).Err()).To(Succeed())
				Expect(rdb.Incr(ctx, "sp").Err()).To(MatchError("ERR value is not an integer or out of range"))
			})

			It("MSETs and MGETs", func() {
				Expect(rdb.MSet(ctx, "a", "1", "b", "2", "c", "3").Result()).To(Equal("OK"))
				Expect(other.MGet(ctx, "a", "nosuch", "c", "b").Result()).
					To(Equal([]interface{}{"1", nil, "3", "2"}))
				Expect(rdb.Do(ctx, "MSET", "a", "1", "b").Err()).
					To(MatchError("ERR wrong number of arguments for 'mset' command"))
			})

			It("APPENDs, STRLENs, GETRANGEs and SETRANGEs", func() {
				Expect(rdb.Append(ctx, "s", "Hello").Result()).To(Equal(int64(5)))
				Expect(rdb.Append(ctx, "s", " World").Result()).To(Equal(int64(11)))
				Expect(other.StrLen(ctx, "s").Result()).To(Equal(int64(11)))
				Expect(other.StrLen(ctx, "nosuch").Result()).To(BeZero())
				Expect(other.GetRange(ctx, "s", 0, 4).Result()).To(Equal("Hello"))
				Expect(other.GetRange(ctx, "s", -5, -1).Result()).To(Equal("World"))
				Expect(other.GetRange(ctx, "s", 3, 1).Result()).To(Equal(""))
				Expect(other.GetRange(ctx, "s", 100, 200).Result()).To(Equal(""))
				// Redis 7.0 clamps a too-negative end to 0 (7.2 returns "").
				Expect(other.GetRange(ctx, "s", 0, -100).Result()).To(Equal("H"))
				Expect(rdb.SetRange(ctx, "s", 6, "Redis").Result()).To(Equal(int64(11)))
				Expect(other.Get(ctx, "s").Result()).To(Equal("Hello Redis"))
				Expect(rdb.SetRange(ctx, "pad", 3, "x").Result()).To(Equal(int64(4)))
				Expect(other.Get(ctx, "pad").Result()).To(Equal("\x00\x00\x00x"))
				Expect(rdb.SetRange(ctx, "s", -1, "x").Err()).To(MatchError("ERR offset is out of range"))
			})

			It("DELs, EXISTS, TYPEs, RENAMEs, EXPIREs and PERSISTs keys", func() {
				Expect(rdb.MSet(ctx, "a", "1", "b", "2", "c", "3").Err()).To(Succeed())
				Expect(other.Exists(ctx, "a", "a", "nosuch").Result()).To(Equal(int64(2)))
				Expect(rdb.Del(ctx, "a", "nosuch").Result()).To(Equal(int64(1)))
				Expect(other.Exists(ctx, "a").Result()).To(BeZero())
				Expect(other.Type(ctx, "b").Result()).To(Equal("string"))
				Expect(other.Type(ctx, "nosuch").Result()).To(Equal("none"))

				Expect(rdb.Rename(ctx, "b", "b2").Result()).To(Equal("OK"))
				Expect(other.Exists(ctx, "b").Result()).To(BeZero())
				Expect(other.Get(ctx, "b2").Result()).To(Equal("2"))
				Expect(rdb.Rename(ctx, "nosuch", "x").Err()).To(MatchError("ERR no such key"))

				Expect(rdb.Expire(ctx, "c", 100*time.Second).Result()).To(BeTrue())
				Expect(other.TTL(ctx, "c").Val()).To(BeNumerically("~", 100*time.Second, 2*time.Second))
				Expect(rdb.Rename(ctx, "c", "c2").Err()).To(Succeed())
				Expect(other.TTL(ctx, "c2").Val()).To(BeNumerically("~", 100*time.Second, 2*time.Second))
				Expect(rdb.Persist(ctx, "c2").Result()).To(BeTrue())
				Expect(rdb.Persist(ctx, "c2").Result()).To(BeFalse())
				Expect(other.TTL(ctx, "c2").Val()).To(Equal(time.Duration(-1)))
				Expect(other.TTL(ctx, "nosuch").Val()).To(Equal(time.Duration(-2)))
				Expect(rdb.Expire(ctx, "nosuch", time.Second).Result()).To(BeFalse())

				Expect(rdb.Expire(ctx, "b2", -1*time.Second).Result()).To(BeTrue())
				Expect(other.Exists(ctx, "b2").Result()).To(BeZero())
			})

			It("SCANs over 5000 keys and returns every key", func() {
				const n = 5000
				_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
					for i := 0; i < n; i++ {
						p.Set(ctx, "key:"+strconv.Itoa(i), i, 0)
					}
					return nil
				})
				Expect(err).NotTo(HaveOccurred())
				Expect(other.DBSize(ctx).Result()).To(Equal(int64(n)))

				scanAll := func(match string, count int64) map[string]bool {
					seen := map[string]bool{}
					var cursor uint64
					for calls := 0; ; calls++ {
						Expect(calls).To(BeNumerically("<", 10*n), "SCAN does not terminate")
						keys, next, err := other.Scan(ctx, cursor, match, count).Result()
						Expect(err).NotTo(HaveOccurred())
						for _, k := range keys {
							seen[k] = true
						}
						if next == 0 {
							return seen
						}
						cursor = next
					}
				}
				seen := scanAll("", 100)
				var missing []string
				for i := 0; i < n; i++ {
					if k := "key:" + strconv.Itoa(i); !seen[k] {
						missing = append(missing, k)
					}
				}
				Expect(missing).To(BeEmpty(), "keys SCAN never returned")
				Expect(seen).To(HaveLen(n))
				// key:1, key:10..19, key:100..199, key:1000..1999
				Expect(scanAll("key:1*", 1000)).To(HaveLen(1111))
			})

			It("answers HELLO with the server's map", func() {
				v, err := rdb.Do(ctx, "HELLO", strconv.Itoa(proto)).Result()
				Expect(err).NotTo(HaveOccurred())
				m := toStringMap(v)
				Expect(m).To(HaveKeyWithValue("server", "redis"))
				Expect(m).To(HaveKeyWithValue("version", "7.0.15"))
				Expect(m).To(HaveKeyWithValue("proto", int64(proto)))
				Expect(m).To(HaveKeyWithValue("id", BeNumerically(">", 0)))
				Expect(m).To(HaveKeyWithValue("mode", "standalone"))
				Expect(m).To(HaveKeyWithValue("role", "master"))
				Expect(m).To(HaveKeyWithValue("modules", BeEmpty()))
				Expect(m).To(HaveLen(7))
				Expect(rdb.Do(ctx, "HELLO", "4").Err()).To(MatchError("NOPROTO unsupported protocol version"))
			})

			It("names and lists clients with CLIENT SETNAME, GETNAME, ID and LIST", func() {
				conn := rdb.Conn()
				DeferCleanup(conn.Close)
				Expect(conn.ClientGetName(ctx).Err()).To(Equal(redis.Nil))
				Expect(conn.ClientSetName(ctx, "worker-1").Result()).To(BeTrue())
				Expect(conn.ClientGetName(ctx).Result()).To(Equal("worker-1"))
				id, err := conn.ClientID(ctx).Result()
				Expect(err).NotTo(HaveOccurred())
				Expect(id).To(BeNumerically(">", 0))

				list, err := other.ClientList(ctx).Result()
				Expect(err).NotTo(HaveOccurred())
				line := clientLine(list, id)
				Expect(line).NotTo(BeEmpty(), "CLIENT LIST has no id=%d:\n%s", id, list)
				Expect(line).To(ContainSubstring(" name=worker-1 "))
				Expect(line).To(MatchRegexp(`\baddr=127\.0\.0\.1:\d+ `))
				Expect(line).To(ContainSubstring(fmt.Sprintf(" laddr=%s ", srv.Addr())))
				Expect(line).To(MatchRegexp(`\bdb=0 `))
				Expect(line).To(MatchRegexp(fmt.Sprintf(`\bresp=%d\b`, proto)))
				Expect(strings.Count(strings.TrimSpace(list), "\n") + 1).To(BeNumerically(">=", 2))

				Expect(conn.ClientSetName(ctx, "bad name").Err()).To(MatchError(
					"ERR Client names cannot contain spaces, newlines or special characters."))
				Expect(conn.Do(ctx, "CLIENT", "NOSUCH").Err()).To(MatchError(
					"ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP."))
				Expect(conn.Ping(ctx).Err()).To(Succeed())
			})

			It("CONFIG GETs and SETs parameters", func() {
				Expect(other.ConfigGet(ctx, "port").Result()).To(Equal(map[string]string{"port": strconv.Itoa(srv.Port)}))
				Expect(rdb.ConfigSet(ctx, "timeout", "321").Result()).To(Equal("OK"))
				Expect(other.ConfigGet(ctx, "timeout").Result()).To(Equal(map[string]string{"timeout": "321"}))
				Expect(rdb.ConfigSet(ctx, "maxmemory", "10mb").Err()).To(Succeed())
				Expect(other.ConfigGet(ctx, "maxmemory").Result()).To(Equal(map[string]string{"maxmemory": "10485760"}))
				m, err := other.ConfigGet(ctx, "maxmemory*").Result()
				Expect(err).NotTo(HaveOccurred())
				Expect(m).To(HaveKey("maxmemory"))
				Expect(m).To(HaveKey("maxmemory-policy"))
				Expect(other.ConfigGet(ctx, "nosuch-parameter").Result()).To(BeEmpty())
				Expect(rdb.ConfigSet(ctx, "nosuch-parameter", "1").Err()).To(MatchError(
					"ERR Unknown option or number of arguments for CONFIG SET - 'nosuch-parameter'"))
				Expect(rdb.ConfigSet(ctx, "timeout", "abc").Err()).To(MatchError(
					ContainSubstring("argument couldn't be parsed into an integer")))
				Expect(other.ConfigGet(ctx, "timeout").Result()).To(Equal(map[string]string{"timeout": "321"}))
			})

			It("reports INFO sections", func() {
				Expect(rdb.Set(ctx, "k", "v", 0).Err()).To(Succeed())
				all, err := other.Info(ctx).Result()
				Expect(err).NotTo(HaveOccurred())
				info := parseInfo(all)
				Expect(info).To(HaveKeyWithValue("redis_version", "7.0.15"))
				Expect(info).To(HaveKeyWithValue("run_id", MatchRegexp(`^[0-9a-f]{40}$`)))
				Expect(info).To(HaveKeyWithValue("tcp_port", strconv.Itoa(srv.Port)))
				Expect(info).To(HaveKeyWithValue("role", "master"))
				Expect(info).To(HaveKeyWithValue("db0", HavePrefix("keys=1,expires=0,")))
				for _, section := range []string{"# Server", "# Clients", "# Memory", "# Persistence", "# Stats", "# Replication", "# CPU", "# Keyspace"} {
					Expect(all).To(ContainSubstring(section + "\r\n"))
				}

				server, err := rdb.Info(ctx, "server").Result()
				Expect(err).NotTo(HaveOccurred())
				Expect(server).To(HavePrefix("# Server\r\n"))
				Expect(server).NotTo(ContainSubstring("# Replication"))
				Expect(parseInfo(server)).To(HaveKeyWithValue("run_id", info["run_id"]))

				repl, err := rdb.Info(ctx, "replication").Result()
				Expect(err).NotTo(HaveOccurred())
				Expect(repl).To(HavePrefix("# Replication\r\n"))
				Expect(parseInfo(repl)).To(HaveKeyWithValue("role", "master"))
				Expect(parseInfo(repl)).To(HaveKeyWithValue("connected_slaves", "0"))
			})

			It("counts, flushes and selects databases", func() {
				opts := srv.ClientOptions(proto)
				opts.DB = 1
				db1 := NewClient(opts)
				Expect(rdb.Set(ctx, "a", "0", 0).Err()).To(Succeed())
				Expect(db1.MSet(ctx, "x", "1", "y", "1").Err()).To(Succeed())
				Expect(other.DBSize(ctx).Result()).To(Equal(int64(1)))
				Expect(db1.DBSize(ctx).Result()).To(Equal(int64(2)))
				Expect(other.Exists(ctx, "x").Result()).To(BeZero())

				conn := other.Conn()
				DeferCleanup(conn.Close)
				Expect(conn.Select(ctx, 1).Result()).To(Equal("OK"))
				Expect(conn.Get(ctx, "x").Result()).To(Equal("1"))
				Expect(conn.Select(ctx, 16).Err()).To(MatchError("ERR DB index is out of range"))
				Expect(conn.Do(ctx, "SELECT", "abc").Err()).To(MatchError("ERR value is not an integer or out of range"))
				Expect(conn.Do(ctx, "SELECT", "99999999999999999").Err()).To(MatchError(
					"ERR value is out of range, value must between -2147483648 and 2147483647"))

				Expect(db1.FlushDB(ctx).Result()).To(Equal("OK"))
				Expect(conn.DBSize(ctx).Result()).To(BeZero())
				Expect(other.DBSize(ctx).Result()).To(Equal(int64(1)))
				Expect(conn.Set(ctx, "z", "1", 0).Err()).To(Succeed())
				Expect(db1.Get(ctx, "z").Result()).To(Equal("1"))
				Expect(rdb.FlushAll(ctx).Result()).To(Equal("OK"))
				Expect(db1.DBSize(ctx).Result()).To(BeZero())
				Expect(other.DBSize(ctx).Result()).To(BeZero())
			})

			It("runs a pipeline of 1000 commands", func() {
				cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
					for i := 0; i < 1000; i++ {
						if i%2 == 0 {
							p.Set(ctx, "p:"+strconv.Itoa(i), i, 0)
						} else {
							p.Incr(ctx, "ctr")
						}
					}
					return nil
				})
				Expect(err).NotTo(HaveOccurred())
				Expect(cmds).To(HaveLen(1000))
				for i, c := range cmds {
					if i%2 == 0 {
						Expect(c.(*redis.StatusCmd).Val()).To(Equal("OK"))
					} else {
						Expect(c.(*redis.IntCmd).Val()).To(Equal(int64(i/2 + 1)))
					}
				}
				Expect(other.Get(ctx, "ctr").Result()).To(Equal("500"))

				gets, err := other.Pipelined(ctx, func(p redis.Pipeliner) error {
					for i := 0; i < 1000; i += 2 {
						p.Get(ctx, "p:"+strconv.Itoa(i))
						p.Get(ctx, "missing:"+strconv.Itoa(i))
					}
					return nil
				})
				Expect(err).To(Equal(redis.Nil)) // the first error of the batch
				Expect(gets).To(HaveLen(1000))
				for j, c := range gets {
					if j%2 == 0 {
						Expect(c.(*redis.StringCmd).Val()).To(Equal(strconv.Itoa(j)))
					} else {
						Expect(c.Err()).To(Equal(redis.Nil))
					}
				}
			})

			It("delivers published messages to subscribers", func() {
				sub := rdb.Subscribe(ctx, "news")
				DeferCleanup(sub.Close)
				Expect(sub.Receive(ctx)).To(Equal(&redis.Subscription{Kind: "subscribe", Channel: "news", Count: 1}))
				psub := rdb.PSubscribe(ctx, "ne*")
				DeferCleanup(psub.Close)
				Expect(psub.Receive(ctx)).To(Equal(&redis.Subscription{Kind: "psubscribe", Channel: "ne*", Count: 1}))

				Expect(other.PubSubNumSub(ctx, "news", "nosuch").Result()).
					To(Equal(map[string]int64{"news": 1, "nosuch": 0}))
				Expect(other.PubSubChannels(ctx, "*").Result()).To(Equal([]string{"news"}))
				Expect(other.PubSubNumPat(ctx).Result()).To(Equal(int64(1)))

				Expect(other.Publish(ctx, "news", "hello").Result()).To(Equal(int64(2)))
				Expect(other.Publish(ctx, "nobody", "x").Result()).To(BeZero())

				var msg *redis.Message
				Eventually(sub.Channel()).WithTimeout(5 * time.Second).Should(Receive(&msg))
				Expect(msg.Channel).To(Equal("news"))
				Expect(msg.Payload).To(Equal("hello"))
				Expect(msg.Pattern).To(BeEmpty())
				Eventually(psub.Channel()).WithTimeout(5 * time.Second).Should(Receive(&msg))
				Expect(msg.Pattern).To(Equal("ne*"))
				Expect(msg.Channel).To(Equal("news"))
				Expect(msg.Payload).To(Equal("hello"))

				Expect(sub.Unsubscribe(ctx, "news")).To(Succeed())
				Eventually(func() map[string]int64 {
					return other.PubSubNumSub(ctx, "news").Val()
				}).WithTimeout(5 * time.Second).Should(Equal(map[string]int64{"news": 0}))
			})

			It("expires a PX 100 key", func() {
				Expect(rdb.Set(ctx, "tmp", "v", 100*time.Millisecond).Err()).To(Succeed())
				Expect(rdb.Set(ctx, "keep", "v", 0).Err()).To(Succeed())
				Eventually(func() (int64, error) {
					return other.Exists(ctx, "tmp").Result()
				}).WithTimeout(5 * time.Second).WithPolling(20 * time.Millisecond).Should(BeZero())
				Expect(other.Get(ctx, "tmp").Err()).To(Equal(redis.Nil))
				Expect(other.TTL(ctx, "tmp").Val()).To(Equal(time.Duration(-2)))
				Expect(other.Get(ctx, "keep").Result()).To(Equal("v"))
			})

			It("reclaims expired keys nobody reads (active expiry)", func() {
				_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
					for i := 0; i < 50; i++ {
						p.Set(ctx, "tmp:"+strconv.Itoa(i), "v", 100*time.Millisecond)
					}
					p.Set(ctx, "keep", "v", 0)
					return nil
				})
				Expect(err).NotTo(HaveOccurred())
				Eventually(func() (int64, error) {
					return other.DBSize(ctx).Result()
				}).WithTimeout(10 * time.Second).WithPolling(50 * time.Millisecond).Should(Equal(int64(1)))
			})

			It("replies Redis's error texts and keeps the connection", func() {
				Expect(rdb.Do(ctx, "NOSUCHCMD", "a", "b").Err()).To(MatchError(
					"ERR unknown command 'NOSUCHCMD', with args beginning with: 'a' 'b' "))
				Expect(rdb.Do(ctx, "nosuchcmd").Err()).To(MatchError(
					"ERR unknown command 'nosuchcmd', with args beginning with: "))
				Expect(rdb.Do(ctx, "GET").Err()).To(MatchError("ERR wrong number of arguments for 'get' command"))
				Expect(rdb.Do(ctx, "get", "a", "b").Err()).To(MatchError("ERR wrong number of arguments for 'get' command"))
				Expect(rdb.Do(ctx, "SET", "k").Err()).To(MatchError("ERR wrong number of arguments for 'set' command"))
				Expect(rdb.Do(ctx, "CONFIG", "GET").Err()).To(MatchError("ERR wrong number of arguments for 'config|get' command"))
				Expect(rdb.Do(ctx, "EXPIRE", "k", "abc").Err()).To(MatchError("ERR value is not an integer or out of range"))
				Expect(rdb.Ping(ctx).Result()).To(Equal("PONG"))
			})

			It("replies WRONGTYPE for a string command on another type", func() {
				if err := rdb.LPush(ctx, "list", "a").Err(); err != nil && strings.Contains(err.Error(), "unknown command") {
					Skip("lists are not implemented yet: " + err.Error())
				}
				const wrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"
				Expect(other.Type(ctx, "list").Result()).To(Equal("list"))
				Expect(rdb.Get(ctx, "list").Err()).To(MatchError(wrongType))
				Expect(rdb.Incr(ctx, "list").Err()).To(MatchError(wrongType))
				Expect(rdb.Append(ctx, "list", "x").Err()).To(MatchError(wrongType))
				Expect(rdb.Set(ctx, "list", "s", 0).Err()).To(Succeed())
				Expect(other.Type(ctx, "list").Result()).To(Equal("string"))
			})
		})
	}
})

// toStringMap turns a RESP3 map or a RESP2 flat array into a map.
func toStringMap(v interface{}) map[string]interface{} {
	GinkgoHelper()
	out := map[string]interface{}{}
	switch t := v.(type) {
	case map[interface{}]interface{}:
		for k, val := range t {
			out[fmt.Sprint(k)] = val
		}
	case []interface{}:
		Expect(len(t)%2).To(BeZero(), "odd-length array %v", t)
		for i := 0; i < len(t); i += 2 {
			out[fmt.Sprint(t[i])] = t[i+1]
		}
	default:
		Fail(fmt.Sprintf("not a map: %T %v", v, v))
	}
	return out
}

// clientLine returns the CLIENT LIST line of client id, or "".
func clientLine(list string, id int64) string {
	for _, line := range strings.Split(list, "\n") {
		if strings.HasPrefix(line, fmt.Sprintf("id=%d ", id)) {
			return strings.TrimRight(line, "\r")
		}
	}
	return ""
}

var infoLine = regexp.MustCompile(`^([a-z0-9_]+):(.*)$`)

// parseInfo parses INFO output into field -> value.
func parseInfo(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if sm := infoLine.FindStringSubmatch(strings.TrimRight(line, "\r")); sm != nil {
			m[sm[1]] = sm[2]
		}
	}
	return m
}
