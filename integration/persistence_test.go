package integration

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// RDB persistence of real processes: what survives SAVE, SIGTERM and
// SIGKILL, and how a corrupt dump.rdb stops startup.
var _ = Describe("RDB persistence", Label("persistence"), func() {
	var ctx context.Context

	BeforeEach(func() {
		ctx = context.Background()
	})

	infoField := func(c *redis.Client, name string) string {
		GinkgoHelper()
		info, err := c.Info(ctx, "persistence").Result()
		Expect(err).NotTo(HaveOccurred())
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				return v
			}
		}
		return ""
	}

	It("restarts after SAVE with everything", func() {
		dir := TempDir()
		srv := StartServerWith(ServerOptions{Dir: dir})
		c := srv.Client(2)
		big := strings.Repeat("0123456789abcdef", 1<<17) // 2 MB
		Expect(c.Set(ctx, "s", "hello", 0).Err()).To(Succeed())
		Expect(c.Set(ctx, "big", big, 0).Err()).To(Succeed())
		Expect(c.Set(ctx, "\x00bin\xff", "\x01\x02", 0).Err()).To(Succeed())
		Expect(c.Set(ctx, "ttl", "v", time.Hour).Err()).To(Succeed())
		Expect(c.RPush(ctx, "l", "a", "b", "c").Err()).To(Succeed())
		Expect(c.HSet(ctx, "h", "f", "v").Err()).To(Succeed())
		Expect(c.SAdd(ctx, "set", "x", "y").Err()).To(Succeed())
		Expect(c.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "m"}).Err()).To(Succeed())
		members := make([]any, 0, 20000)
		for i := range 20000 {
			members = append(members, "m"+strconv.Itoa(i))
		}
		Expect(c.SAdd(ctx, "bigset", members...).Err()).To(Succeed())
		Expect(c.Save(ctx).Val()).To(Equal("OK"))
		srv.Kill()

		srv = StartServerWith(ServerOptions{Dir: dir})
		c = srv.Client(2)
		Expect(c.Get(ctx, "s").Val()).To(Equal("hello"))
		Expect(c.Get(ctx, "big").Val()).To(Equal(big))
		Expect(c.Get(ctx, "\x00bin\xff").Val()).To(Equal("\x01\x02"))
		Expect(c.PTTL(ctx, "ttl").Val()).To(BeNumerically(">", 50*time.Minute))
		Expect(c.LRange(ctx, "l", 0, -1).Val()).To(Equal([]string{"a", "b", "c"}))
		Expect(c.HGetAll(ctx, "h").Val()).To(Equal(map[string]string{"f": "v"}))
		Expect(c.SMembers(ctx, "set").Val()).To(ConsistOf("x", "y"))
		Expect(c.ZRangeWithScores(ctx, "z", 0, -1).Val()).To(Equal([]redis.Z{{Score: 1.5, Member: "m"}}))
		Expect(c.SCard(ctx, "bigset").Val()).To(Equal(int64(20000)))
		Expect(c.DBSize(ctx).Val()).To(Equal(int64(9)))
		Expect(infoField(c, "rdb_last_load_keys_loaded")).To(Equal("9"))
	})

	It("keeps the previous dump.rdb when killed during a slow BGSAVE", func() {
		if IsRealRedis() {
			Skip("redis-server's forked child outlives a SIGKILL of its parent and completes the save")
		}
		dir := TempDir()
		srv := StartServerWith(ServerOptions{Dir: dir})
		c := srv.Client(2)
		for i := range 50 {
			Expect(c.Set(ctx, "k"+strconv.Itoa(i), "old", 0).Err()).To(Succeed())
		}
		Expect(c.Save(ctx).Val()).To(Equal("OK"))
		before, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
		Expect(err).NotTo(HaveOccurred())
		for i := range 50 {
			Expect(c.Set(ctx, "k"+strconv.Itoa(i), "new", 0).Err()).To(Succeed())
		}
		// 100 ms a key: the BGSAVE would take 5 seconds.
		Expect(c.ConfigSet(ctx, "rdb-key-save-delay", "100000").Err()).To(Succeed())
		Expect(c.BgSave(ctx).Val()).To(Equal("Background saving started"))
		// Mid-save: its temp file exists (Redis: temp-<child pid>.rdb).
		Eventually(func() []string {
			m, _ := filepath.Glob(filepath.Join(dir, "temp-*.rdb"))
			return m
		}).WithTimeout(StartTimeout).WithPolling(10 * time.Millisecond).ShouldNot(BeEmpty())
		Expect(infoField(c, "rdb_bgsave_in_progress")).To(Equal("1"))
		srv.Kill()

		after, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(Equal(before), "dump.rdb changed by a killed BGSAVE")
		srv = StartServerWith(ServerOptions{Dir: dir})
		c = srv.Client(2)
		Expect(c.DBSize(ctx).Val()).To(Equal(int64(50)))
		for i := range 50 {
			Expect(c.Get(ctx, "k"+strconv.Itoa(i)).Val()).To(Equal("old"))
		}
	})

	It("saves on SIGTERM when save points are configured", func() {
		dir := TempDir()
		srv := StartServerWith(ServerOptions{Dir: dir, Args: []string{"--save", "3600 1"}})
		c := srv.Client(2)
		Expect(c.Set(ctx, "a", "1", 0).Err()).To(Succeed())
		Expect(srv.Terminate()).To(Equal(0))
		Expect(srv.Log()).To(ContainSubstring("Saving the final RDB snapshot before exiting."))
		srv = StartServerWith(ServerOptions{Dir: dir})
		Expect(srv.Client(2).Get(ctx, "a").Val()).To(Equal("1"))
	})

	It("refuses to start on a truncated dump.rdb", func() {
		dir := TempDir()
		srv := StartServerWith(ServerOptions{Dir: dir})
		c := srv.Client(2)
		Expect(c.Set(ctx, "a", strings.Repeat("x", 1000), 0).Err()).To(Succeed())
		Expect(c.Save(ctx).Val()).To(Equal("OK"))
		srv.Kill()
		path := filepath.Join(dir, "dump.rdb")
		data, err := os.ReadFile(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(path, data[:len(data)/2], 0o644)).To(Succeed())
		srv = LaunchServer(ServerOptions{Dir: dir})
		Expect(srv.WaitExit()).To(Equal(1))
		Expect(srv.Log()).To(ContainSubstring("Short read or OOM loading DB. Unrecoverable error, aborting now."))
	})

	It("answers -LOADING while the dataset loads, and a SIGTERM then exits without saving", func() {
		dir := TempDir()
		srv := StartServerWith(ServerOptions{Dir: dir})
		c := srv.Client(2)
		for i := range 2000 {
			Expect(c.Set(ctx, "k"+strconv.Itoa(i), "v", 0).Err()).To(Succeed())
		}
		Expect(c.Save(ctx).Val()).To(Equal("OK"))
		srv.Kill()
		before, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
		Expect(err).NotTo(HaveOccurred())

		slow := []string{"--key-load-delay", "1000", "--loading-process-events-interval-bytes", "1024"}
		srv = StartServerWith(ServerOptions{Dir: dir, Args: slow, ReadyWhileLoading: true})
		c = srv.Client(2)
		Expect(c.Get(ctx, "k1").Err()).To(MatchError("LOADING Redis is loading the dataset in memory"))
		Expect(infoField(c, "loading")).To(Equal("1"))
		Expect(infoField(c, "loading_total_bytes")).To(Equal(strconv.Itoa(len(before))))
		Eventually(func() int64 { return c.DBSize(ctx).Val() }).
			WithTimeout(time.Minute).WithPolling(50 * time.Millisecond).Should(Equal(int64(2000)))
		Expect(infoField(c, "loading")).To(Equal("0"))
		Expect(c.Get(ctx, "k1").Val()).To(Equal("v"))
		srv.Kill()

		// A SIGTERM during the load exits 0 and never saves the partial
		// dataset, even with save points.
		srv = StartServerWith(ServerOptions{Dir: dir, Args: append(slow, "--save", "1 1"), ReadyWhileLoading: true})
		Expect(infoField(srv.Client(2), "loading")).To(Equal("1"))
		Expect(srv.Terminate()).To(Equal(0))
		after, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(Equal(before))
	})
})
