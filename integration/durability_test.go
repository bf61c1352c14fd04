package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// Durability of the append-only file across SIGKILL: with appendfsync
// always every acknowledged write is on disk; with everysec the files
// stay loadable. The same specs run against redis-server (VIGIL_SERVER_BIN).
var _ = Describe("AOF durability", Label("durability"), func() {
	aofArgs := func(fsync string) []string {
		return []string{"--appendonly", "yes", "--appendfsync", fsync, "--aof-use-rdb-preamble", "no",
			"--auto-aof-rewrite-percentage", "0"}
	}

	// writeUntilKilled runs writers on srv, kills it with SIGKILL once
	// `after` writes were acknowledged, and returns the acknowledged
	// writes (key -> value), the writes in flight at the kill (which may
	// or may not have reached the disk) and the list elements
	// acknowledged.
	writeUntilKilled := func(srv *Server, after int64, rng *rand.Rand) (map[string]string, map[string][]string, map[string]bool) {
		var mu sync.Mutex
		acked := map[string]string{}
		inflight := map[string][]string{}
		pushed := map[string]bool{}
		var n atomic.Int64
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			seed := rng.Uint64()
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				c := redis.NewClient(srv.ClientOptions(2))
				defer c.Close()
				r := rand.New(rand.NewPCG(seed, 7))
				for i := 0; ctx.Err() == nil; i++ {
					key := fmt.Sprintf("k:%d", r.IntN(500))
					val := fmt.Sprintf("%d-%d", seed%1000, i)
					if r.IntN(4) == 0 {
						if c.RPush(ctx, "list", val).Err() != nil {
							return
						}
						mu.Lock()
						pushed[val] = true
						mu.Unlock()
					} else {
						// Hold the lock across the write so the recorded
						// value is the last acknowledged one per key.
						mu.Lock()
						err := c.Set(ctx, key, val, 0).Err()
						if err == nil {
							acked[key] = val
						} else {
							inflight[key] = append(inflight[key], val)
						}
						mu.Unlock()
						if err != nil {
							return
						}
					}
					n.Add(1)
				}
			}()
		}
		Eventually(n.Load).WithTimeout(StartTimeout).Should(BeNumerically(">=", after))
		srv.Kill()
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return acked, inflight, pushed
	}

	It("keeps every acknowledged write with appendfsync always across SIGKILL", func() {
		for _, seed := range []uint64{1, 2, 3} {
			By("seed " + strconv.FormatUint(seed, 10))
			rng := rand.New(rand.NewPCG(seed, 11))
			dir := TempDir()
			srv := StartServerWith(ServerOptions{Dir: dir, Args: append(aofArgs("always"), "--dir", dir)})
			after := int64(200 + rng.IntN(1500))
			acked, inflight, pushed := writeUntilKilled(srv, after, rng)

			srv2 := StartServerWith(ServerOptions{Dir: dir, Args: append(aofArgs("always"), "--dir", dir)})
			c := srv2.Client(2)
			ctx := context.Background()
			for k, v := range acked {
				Expect(c.Get(ctx, k).Val()).To(BeElementOf(append([]string{v}, inflight[k]...)), "key %s (seed %d)", k, seed)
			}
			all, err := c.LRange(ctx, "list", 0, -1).Result()
			Expect(err).NotTo(HaveOccurred())
			have := map[string]bool{}
			for _, e := range all {
				have[e] = true
			}
			for e := range pushed {
				Expect(have).To(HaveKey(e), "list element %s (seed %d)", e, seed)
			}
			srv2.Kill()
		}
	})

	It("restarts from a valid AOF with appendfsync everysec after SIGKILL", func() {
		rng := rand.New(rand.NewPCG(42, 11))
		dir := TempDir()
		srv := StartServerWith(ServerOptions{Dir: dir, Args: append(aofArgs("everysec"), "--dir", dir)})
		writeUntilKilled(srv, 1000, rng)
		if _, err := exec.LookPath("redis-check-aof"); err == nil {
			out, err := exec.Command("redis-check-aof", filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
		}
		srv2 := StartServerWith(ServerOptions{Dir: dir, Args: append(aofArgs("everysec"), "--dir", dir)})
		Expect(srv2.Client(2).Ping(context.Background()).Err()).To(Succeed())
	})

	It("keeps the previous files intact when killed during BGREWRITEAOF", func() {
		dir := TempDir()
		srv := StartServerWith(ServerOptions{Dir: dir, Args: append(aofArgs("always"), "--dir", dir)})
		c := srv.Client(2)
		ctx := context.Background()
		pipe := c.Pipeline()
		for i := 0; i < 20000; i++ {
			pipe.Set(ctx, "key:"+strconv.Itoa(i), i, 0)
		}
		_, err := pipe.Exec(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.BgRewriteAOF(ctx).Err()).To(Succeed())
		Expect(c.Set(ctx, "during", "1", 0).Err()).To(Succeed())
		srv.Kill()
		srv2 := StartServerWith(ServerOptions{Dir: dir, Args: append(aofArgs("always"), "--dir", dir)})
		c2 := srv2.Client(2)
		Expect(c2.DBSize(ctx).Val()).To(Equal(int64(20001)))
		Expect(c2.Get(ctx, "during").Val()).To(Equal("1"))
		// No temporary file is taken for a base.
		ents, err := os.ReadDir(filepath.Join(dir, "appendonlydir"))
		Expect(err).NotTo(HaveOccurred())
		for _, e := range ents {
			Expect(e.Name()).NotTo(HavePrefix("temp-rewriteaof"), "left-over temp file after restart")
		}
	})

	It("refuses a corrupt AOF naming redis-check-aof, and drops a cut last command with a warning", func() {
		dir := TempDir()
		args := append(aofArgs("always"), "--dir", dir)
		srv := StartServerWith(ServerOptions{Dir: dir, Args: args})
		c := srv.Client(2)
		ctx := context.Background()
		Expect(c.Set(ctx, "a", "1", 0).Err()).To(Succeed())
		Expect(c.Set(ctx, "b", "2", 0).Err()).To(Succeed())
		srv.Kill()
		incr := filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof")
		data, err := os.ReadFile(incr)
		Expect(err).NotTo(HaveOccurred())

		By("a format error in the middle stops start-up")
		bad := append([]byte{}, data...)
		bad[len(bad)/2] = '!'
		bad[0] = 'x'
		Expect(os.WriteFile(incr, bad, 0o644)).To(Succeed())
		failed := LaunchServer(ServerOptions{Dir: dir, Args: args})
		Expect(failed.WaitExit()).To(Equal(1))
		Expect(failed.Log()).To(And(ContainSubstring("appendonly.aof.1.incr.aof"), ContainSubstring("redis-check-aof")))

		By("a cut last command is dropped (aof-load-truncated yes)")
		Expect(os.WriteFile(incr, data[:len(data)-4], 0o644)).To(Succeed())
		srv2 := StartServerWith(ServerOptions{Dir: dir, Args: args})
		c2 := srv2.Client(2)
		Expect(c2.Get(ctx, "a").Val()).To(Equal("1"))
		Expect(c2.Exists(ctx, "b").Val()).To(Equal(int64(0)))
		Expect(srv2.Log()).To(ContainSubstring("short read while loading the AOF file"))
	})
})
