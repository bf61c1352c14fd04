package integration

import (
	"context"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// The ACL seen from go-redis and redis-cli: a user created with ACL
// SETUSER authenticates (HELLO AUTH from go-redis, AUTH from redis-cli
// --user/--pass), gets NOPERM for a command and a key it may not use, and
// loses its connection when it is deleted. Turning a user off refuses new
// authentications but, as in Redis 7.0.15, keeps the connections already
// authenticated; on again, it authenticates.
var _ = Describe("ACL", Label("interop"), func() {
	var (
		ctx   context.Context
		srv   *Server
		admin *redis.Client
		cli   func(args ...string) string
	)

	BeforeEach(func() {
		ctx = context.Background()
		srv = StartServer()
		admin = srv.Client(3)
		bin := RequireRedisCLI()
		port := strconv.Itoa(srv.Port)
		cli = func(args ...string) string {
			GinkgoHelper()
			s := RunTool(strings.NewReader(""), bin, append([]string{"-p", port, "--no-auth-warning"}, args...)...)
			return string(s.Out.Contents()) + string(s.Err.Contents())
		}
	})

	userClient := func(proto int, user, pass string) *redis.Client {
		opts := srv.ClientOptions(proto)
		opts.Username, opts.Password = user, pass
		opts.PoolSize = 1
		return NewClient(opts)
	}

	It("creates a user, authenticates it, refuses what it may not do and disconnects it", func() {
		Expect(admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">s3cret", "~app:*", "+@all", "-flushall").Err()).To(Succeed())
		Expect(admin.Do(ctx, "ACL", "GETUSER", "app").Result()).To(HaveKeyWithValue("keys", "~app:*"))

		for _, proto := range []int{3, 2} {
			By("go-redis over RESP" + strconv.Itoa(proto))
			app := userClient(proto, "app", "s3cret")
			Expect(app.Set(ctx, "app:1", "v", 0).Err()).To(Succeed())
			Expect(app.Get(ctx, "app:1").Result()).To(Equal("v"))
			Expect(app.Do(ctx, "ACL", "WHOAMI").Result()).To(Equal("app"))
			_, err := app.Get(ctx, "other").Result()
			Expect(err).To(MatchError("NOPERM this user has no permissions to access one of the keys used as arguments"))
			Expect(app.FlushAll(ctx).Err()).To(MatchError("NOPERM this user has no permissions to run the 'flushall' command"))
			wrong := userClient(proto, "app", "nope")
			Expect(wrong.Ping(ctx).Err()).To(MatchError(ContainSubstring("WRONGPASS invalid username-password pair or user is disabled.")))
		}

		By("redis-cli --user --pass")
		Expect(cli("--user", "app", "--pass", "s3cret", "SET", "app:2", "x")).To(Equal("OK\n"))
		Expect(cli("--user", "app", "--pass", "s3cret", "GET", "other")).To(ContainSubstring("NOPERM this user has no permissions to access one of the keys used as arguments"))
		Expect(cli("--user", "app", "--pass", "s3cret", "FLUSHALL")).To(ContainSubstring("NOPERM this user has no permissions to run the 'flushall' command"))
		Expect(cli("--user", "app", "--pass", "bad", "PING")).To(ContainSubstring("WRONGPASS"))

		By("ACL LOG records the denials")
		log, err := admin.Do(ctx, "ACL", "LOG").Slice()
		Expect(err).NotTo(HaveOccurred())
		var reasons []string
		for _, e := range log {
			m := e.(map[interface{}]interface{})
			reasons = append(reasons, m["reason"].(string)+":"+m["object"].(string)+":"+m["username"].(string))
		}
		Expect(reasons).To(ContainElements("key:other:app", "command:flushall:app", "auth:AUTH:app"))

		By("CLIENT LIST shows the user; off refuses new logins but keeps this connection")
		app := userClient(3, "app", "s3cret")
		conn := app.Conn()
		DeferCleanup(conn.Close)
		Expect(conn.Ping(ctx).Err()).To(Succeed())
		Expect(admin.ClientList(ctx).Result()).To(ContainSubstring(" user=app "))
		Expect(admin.Do(ctx, "ACL", "SETUSER", "app", "off").Err()).To(Succeed())
		Expect(cli("--user", "app", "--pass", "s3cret", "PING")).To(ContainSubstring("WRONGPASS"))
		Expect(conn.Get(ctx, "app:1").Result()).To(Equal("v"))

		By("on again: it authenticates")
		Expect(admin.Do(ctx, "ACL", "SETUSER", "app", "on").Err()).To(Succeed())
		Expect(cli("--user", "app", "--pass", "s3cret", "GET", "app:1")).To(Equal("v\n"))

		By("ACL DELUSER closes the user's connections")
		Expect(admin.Do(ctx, "ACL", "DELUSER", "app").Int()).To(Equal(1))
		Eventually(func() error { return conn.Ping(ctx).Err() }).WithTimeout(5 * time.Second).Should(HaveOccurred())
		Expect(admin.ClientList(ctx).Result()).NotTo(ContainSubstring(" user=app "))
		Expect(cli("--user", "app", "--pass", "s3cret", "PING")).To(ContainSubstring("WRONGPASS"))

		By("re-created, it authenticates again")
		Expect(admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">s3cret", "~app:*", "+get").Err()).To(Succeed())
		again := userClient(2, "app", "s3cret")
		Expect(again.Get(ctx, "app:1").Result()).To(Equal("v"))
		Expect(again.Set(ctx, "app:1", "w", 0).Err()).To(MatchError("NOPERM this user has no permissions to run the 'set' command"))
	})

	It("disconnects a subscriber whose channel permission is revoked", func() {
		Expect(admin.Do(ctx, "ACL", "SETUSER", "sub", "on", ">p", "+@all", "~*", "resetchannels", "&news.*").Err()).To(Succeed())
		sub := userClient(3, "sub", "p")
		ps := sub.Subscribe(ctx, "news.1")
		DeferCleanup(ps.Close)
		_, err := ps.Receive(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(sub.Subscribe(ctx, "other").Receive(ctx)).Error().To(MatchError(ContainSubstring("NOPERM this user has no permissions to access one of the channels used as arguments")))
		Eventually(func() int64 { return admin.PubSubNumSub(ctx, "news.1").Val()["news.1"] }).WithTimeout(5 * time.Second).Should(Equal(int64(1)))
		Expect(admin.Do(ctx, "ACL", "SETUSER", "sub", "resetchannels", "&sports.*").Err()).To(Succeed())
		Eventually(func() int64 { return admin.PubSubNumSub(ctx, "news.1").Val()["news.1"] }).WithTimeout(5 * time.Second).Should(BeZero())
	})
})
