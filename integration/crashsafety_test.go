package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// Crash safety: SIGKILL at seeded random points while a snapshot (SAVE,
// BGSAVE) or an AOF rewrite is being written leaves the previous files
// intact and loadable with the previous contents; with appendfsync
// everysec, writes acknowledged well before the kill survive it.
var _ = Describe("Crash safety", Label("persistence"), func() {
	ctx := context.Background()

	// fill writes n keys prefix:i with 100-byte values.
	fill := func(c *redis.Client, prefix string, n int) {
		GinkgoHelper()
		pipe := c.Pipeline()
		for i := 0; i < n; i++ {
			pipe.Set(ctx, prefix+strconv.Itoa(i), fmt.Sprintf("%s-%0100d", prefix, i), 0)
		}
		_, err := pipe.Exec(ctx)
		Expect(err).NotTo(HaveOccurred())
	}

	// expectOnly asserts the dataset is exactly the n keys old:i.
	expectOnly := func(c *redis.Client, n int, what string) {
		GinkgoHelper()
		Expect(c.DBSize(ctx).Val()).To(Equal(int64(n)), what)
		for _, i := range []int{0, n / 3, n - 1} {
			Expect(c.Get(ctx, "old:"+strconv.Itoa(i)).Val()).To(Equal(fmt.Sprintf("old:-%0100d", i)), what)
		}
		Expect(c.Exists(ctx, "new:0").Val()).To(Equal(int64(0)), what)
	}

	// killDuring waits for the temp file of a save or rewrite (globs) to
	// appear, then kills srv after a seeded random delay below max: a
	// random point of the write, or just after it when it was quicker.
	killDuring := func(srv *Server, globs []string, rng *rand.Rand, max time.Duration) time.Duration {
		GinkgoHelper()
		Eventually(func() []string {
			var m []string
			for _, g := range globs {
				mg, _ := filepath.Glob(g)
				m = append(m, mg...)
			}
			return m
		}).WithTimeout(StartTimeout).WithPolling(time.Millisecond).ShouldNot(BeEmpty())
		d := time.Duration(rng.Int64N(int64(max)))
		time.Sleep(d) // the kill point itself, not a wait for a state
		srv.Kill()
		return d
	}

	checkRDB := func(path string) {
		GinkgoHelper()
		if _, err := exec.LookPath("redis-check-rdb"); err == nil {
			out, err := exec.Command("redis-check-rdb", path).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
		}
	}

	for _, mode := range []string{"SAVE", "BGSAVE"} {
		It("keeps the previous dump.rdb when killed during "+mode, func() {
			if mode == "BGSAVE" && IsRealRedis() {
				Skip("redis-server's BGSAVE child outlives a SIGKILL of the parent")
			}
			const n = 3000
			for _, seed := range []uint64{1, 2, 3} {
				By(fmt.Sprintf("seed %d", seed))
				rng := rand.New(rand.NewPCG(seed, 5))
				dir := TempDir()
				args := []string{"--dir", dir, "--save", ""}
				srv := StartServerWith(ServerOptions{Dir: dir, Args: args})
				c := srv.Client(2)
				fill(c, "old:", n)
				Expect(c.Save(ctx).Err()).To(Succeed())
				fill(c, "new:", n)
				// Makes the save last about a second or more.
				Expect(c.ConfigSet(ctx, "rdb-key-save-delay", "150").Err()).To(Succeed())
				var done sync.WaitGroup
				if mode == "SAVE" {
					done.Add(1)
					go func() {
						defer done.Done()
						srv.Client(2).Save(ctx) // cut by the kill, or done before it
					}()
				} else {
					Expect(c.BgSave(ctx).Err()).To(Succeed())
				}
				at := killDuring(srv, []string{filepath.Join(dir, "temp-*.rdb")}, rng, time.Second)
				done.Wait()
				checkRDB(filepath.Join(dir, "dump.rdb"))
				srv2 := StartServerWith(ServerOptions{Dir: dir, Args: args})
				c2 := srv2.Client(2)
				what := fmt.Sprintf("%s seed %d, killed %v after the temp file appeared", mode, seed, at)
				if c2.DBSize(ctx).Val() == 2*n {
					// The save completed before the kill: the new file, whole.
					GinkgoWriter.Printf("%s: the save finished before the kill\n", what)
					Expect(c2.Get(ctx, "new:"+strconv.Itoa(n-1)).Val()).To(Equal(fmt.Sprintf("new:-%0100d", n-1)), what)
				} else {
					GinkgoWriter.Printf("%s: killed mid-save, the previous file loaded\n", what)
					expectOnly(c2, n, what)
				}
				srv2.Kill()
			}
		})
	}

	It("keeps the previous AOF when killed during BGREWRITEAOF at random points", func() {
		const n = 3000
		for _, preamble := range []string{"no", "yes"} {
			for _, seed := range []uint64{1, 2, 3} {
				By(fmt.Sprintf("preamble %s seed %d", preamble, seed))
				rng := rand.New(rand.NewPCG(seed, 9))
				dir := TempDir()
				args := []string{"--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always",
					"--aof-use-rdb-preamble", preamble, "--auto-aof-rewrite-percentage", "0"}
				srv := StartServerWith(ServerOptions{Dir: dir, Args: args})
				c := srv.Client(2)
				fill(c, "old:", n)
				manifest := filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")
				_, err := os.Stat(manifest)
				Expect(err).NotTo(HaveOccurred())
				Expect(c.ConfigSet(ctx, "rdb-key-save-delay", "600").Err()).To(Succeed()) // about 2 s
				Expect(c.BgRewriteAOF(ctx).Err()).To(Succeed())
				// Writes acknowledged during the rewrite must survive.
				during := 1 + rng.IntN(50)
				for i := 0; i < during; i++ {
					Expect(c.Set(ctx, "during:"+strconv.Itoa(i), "x", 0).Err()).To(Succeed())
				}
				at := killDuring(srv, []string{
					filepath.Join(dir, "appendonlydir", "temp-rewriteaof-*"), // vigil
					filepath.Join(dir, "temp-rewriteaof-*"),                  // redis-server's child
				}, rng, time.Second)
				after, _ := os.ReadFile(manifest)
				// The rewrite opens a new incremental file at once; its
				// new base is in the manifest only once it completed.
				rewritten := strings.Contains(string(after), "seq 2 type b")
				if _, err := exec.LookPath("redis-check-aof"); err == nil {
					out, err := exec.Command("redis-check-aof", manifest).CombinedOutput()
					Expect(err).NotTo(HaveOccurred(), string(out))
				}
				srv2 := StartServerWith(ServerOptions{Dir: dir, Args: args})
				c2 := srv2.Client(2)
				what := fmt.Sprintf("preamble %s seed %d, killed %v after the temp base appeared (rewrite finished: %v)", preamble, seed, at, rewritten)
				GinkgoWriter.Println(what)
				Expect(c2.DBSize(ctx).Val()).To(Equal(int64(n+during)), what)
				Expect(c2.Get(ctx, "old:"+strconv.Itoa(n-1)).Val()).To(Equal(fmt.Sprintf("old:-%0100d", n-1)), what)
				Expect(c2.Get(ctx, "during:"+strconv.Itoa(during-1)).Val()).To(Equal("x"), what)
				srv2.Kill()
			}
		}
	})

	It("with appendfsync everysec keeps every write acknowledged 2 s before a SIGKILL", func() {
		dir := TempDir()
		args := []string{"--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
			"--auto-aof-rewrite-percentage", "0"}
		srv := StartServerWith(ServerOptions{Dir: dir, Args: args})
		c := srv.Client(2)
		type ack struct {
			key string
			at  time.Time
		}
		var acks []ack
		// Write for a seeded 3 to 4 s, then kill.
		rng := rand.New(rand.NewPCG(7, 7))
		stop := time.Now().Add(3*time.Second + time.Duration(rng.IntN(1000))*time.Millisecond)
		for i := 0; time.Now().Before(stop); i++ {
			k := "w:" + strconv.Itoa(i)
			Expect(c.Set(ctx, k, "v", 0).Err()).To(Succeed())
			acks = append(acks, ack{k, time.Now()})
		}
		killed := time.Now()
		srv.Kill()
		srv2 := StartServerWith(ServerOptions{Dir: dir, Args: args})
		c2 := srv2.Client(2)
		lost := 0
		for _, a := range acks {
			present := c2.Exists(ctx, a.key).Val() == 1
			if killed.Sub(a.at) > 2*time.Second {
				Expect(present).To(BeTrue(), "%s acknowledged %v before the kill is lost", a.key, killed.Sub(a.at))
			} else if !present {
				lost++
			}
		}
		GinkgoWriter.Printf("everysec: %d writes acknowledged, %d of those in the last 2 s lost\n", len(acks), lost)
	})
})
