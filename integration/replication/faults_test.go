package replication

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

// Faults during replication: the master killed during a full sync, a
// replica killed while it loads, the link cut mid-transfer and mid-stream,
// a replica paused past repl-timeout. A poller watches the replica the
// whole time: it must answer either its old data, -LOADING, or the whole
// new dataset, never a part of it; at the end its contents equal the
// master's.

// fill writes n string keys prefix<i> (100-byte values) into db 0 with
// pipelined MSETs.
func fill(c *redis.Client, prefix string, n int) {
	GinkgoHelper()
	val := strings.Repeat("v", 90)
	for i := 0; i < n; {
		args := []any{"MSET"}
		for j := 0; j < 500 && i < n; j, i = j+1, i+1 {
			args = append(args, prefix+strconv.Itoa(i), val+strconv.Itoa(i))
		}
		Expect(c.Do(ctx, args...).Err()).To(Succeed())
	}
}

// writeUntilStopped calls write(0), write(1), ... in a goroutine until the
// returned stop is called; stop returns once the goroutine has ended.
func writeUntilStopped(write func(i int)) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-quit:
				return
			default:
			}
			write(i)
		}
	}()
	return func() { close(quit); <-done }
}

// watch is a poller of a replica: DBSIZE and INFO over and over until
// stopped, recording what it saw.
type watch struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	// sizes are the DBSIZE replies in order (consecutive repeats folded);
	// loadingErrs counts -LOADING replies, otherErrs the other errors
	// (the process may be down: connection errors).
	sizes       []int64
	loadingErrs int
	otherErrs   []string
	// infos counts the INFO fields seen with value 1.
	loading, asyncLoading, syncInProgress int
	// loadingWhileSync: loading:1 or async_loading:1 together with
	// master_sync_in_progress:1 in one INFO reply.
	loadingWhileSync int
}

func watchReplica(addr string) *watch {
	w := &watch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer GinkgoRecover()
		defer close(w.done)
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 5 * time.Second, PoolSize: 1})
		defer c.Close()
		for {
			select {
			case <-w.stop:
				return
			default:
			}
			n, err := c.DBSize(ctx).Result()
			info, ierr := c.Info(ctx, "replication", "persistence").Result()
			w.mu.Lock()
			switch {
			case err == nil:
				if len(w.sizes) == 0 || w.sizes[len(w.sizes)-1] != n {
					w.sizes = append(w.sizes, n)
				}
			case strings.HasPrefix(err.Error(), "LOADING "):
				Expect(err.Error()).To(Equal("LOADING Redis is loading the dataset in memory"))
				w.loadingErrs++
			default:
				w.otherErrs = append(w.otherErrs, err.Error())
			}
			if ierr == nil {
				f := map[string]string{}
				for _, l := range strings.Split(info, "\r\n") {
					if k, v, ok := strings.Cut(l, ":"); ok {
						f[k] = v
					}
				}
				if f["loading"] == "1" {
					w.loading++
				}
				if f["async_loading"] == "1" {
					w.asyncLoading++
				}
				if f["master_sync_in_progress"] == "1" {
					w.syncInProgress++
					if f["loading"] == "1" || f["async_loading"] == "1" {
						w.loadingWhileSync++
					}
				}
			}
			w.mu.Unlock()
			time.Sleep(2 * time.Millisecond) // a polling period, not a wait for a state
		}
	}()
	DeferCleanup(w.end)
	return w
}

// end stops the poller (idempotent) and returns it.
func (w *watch) end() *watch {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	return w
}

// sizesWithin asserts every DBSIZE seen is one of allowed.
func (w *watch) sizesWithin(allowed ...int64) {
	GinkgoHelper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range w.sizes {
		Expect(allowed).To(ContainElement(n), "the replica answered DBSIZE %d (seen in order: %v): a partial dataset", n, w.sizes)
	}
}

// startVigilAt restarts a server on the same port and directory.
func restartAt(n *node, args ...string) *node {
	GinkgoHelper()
	a := append([]string{"--repl-diskless-sync-delay", "0", "--port", itoa(n.Port)}, args...)
	s := integration.StartServerWith(integration.ServerOptions{Dir: n.Dir, Args: a})
	return &node{Server: s, c: s.Client(2)}
}

func (n *node) replField(k string) string {
	GinkgoHelper()
	return n.info("replication")[k]
}

// proxy is a TCP proxy to a master that can cut every connection.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(target string) *proxy {
	GinkgoHelper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close(); c.Close() }()
			go func() { _, _ = io.Copy(c, u); u.Close(); c.Close() }()
		}
	}()
	DeferCleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *proxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// cut closes every proxied connection (both sides).
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

const bigKeys = 10000

var _ = Describe("faults during replication", Label("replication", "faults"), func() {
	// A replica loading a full sync: -LOADING meanwhile (or, for swapdb
	// with the master's own history, the old data), never a part of the
	// new dataset; INFO says loading while master_sync_in_progress.
	for _, tc := range []struct {
		mode    string
		oldKeys int  // keys the replica holds before REPLICAOF
		toDisk  bool // the payload goes to dump.rdb (useDisklessLoad false)
	}{
		{"disabled", 5, true},
		{"on-empty-db", 5, true}, // not empty: loads from disk
		{"on-empty-db", 0, false},
		{"swapdb", 5, false}, // another history: loads in the loading state
	} {
		tc := tc
		It(fmt.Sprintf("a replica loading a full sync (repl-diskless-load %s, %d keys before) answers -LOADING, never half the dataset", tc.mode, tc.oldKeys), func() {
			m := startVigil()
			fill(m.c, "k:", bigKeys)
			r := startVigil("--repl-diskless-load", tc.mode, "--key-load-delay", "200")
			fill(r.c, "old:", tc.oldKeys)
			w := watchReplica(r.Addr())
			r.replicaOf(m)
			waitSynced(m, r)
			w.end()
			w.sizesWithin(int64(tc.oldKeys), bigKeys)
			Expect(w.loadingErrs).To(BeNumerically(">", 0), "no -LOADING while %d keys loaded", bigKeys)
			Expect(w.loadingWhileSync).To(BeNumerically(">", 0))
			Expect(w.asyncLoading).To(BeZero())
			_, err := os.Stat(filepath.Join(r.Dir, "dump.rdb"))
			Expect(err == nil).To(Equal(tc.toDisk), "dump.rdb in the replica's dir: %v", err)
			Expect(r.dump()).To(Equal(m.dump()))
		})
	}

	It("a replica paused (SIGSTOP) past repl-timeout resumes with a full sync; swapdb serves the old data while it loads", func() {
		m := startVigil("--repl-backlog-size", "16kb", "--repl-timeout", "2")
		fill(m.c, "k:", bigKeys)
		r := startVigil("--repl-diskless-load", "swapdb", "--key-load-delay", "200", "--replicaof", "127.0.0.1", itoa(m.Port))
		waitSynced(m, r)
		Expect(r.Session.Command.Process.Signal(syscall.SIGSTOP)).To(Succeed())
		DeferCleanup(func() { _ = r.Session.Command.Process.Signal(syscall.SIGCONT) })
		Eventually(func() string { return m.replField("connected_slaves") }).
			WithTimeout(syncTimeout).WithPolling(100 * time.Millisecond).Should(Equal("0"))
		// 200 KB, far more than the backlog, written once the master has
		// dropped the replica: written before, it could all wait in the
		// loopback socket's buffers (autotuned up to tcp_rmem's 32 MB
		// here) and reach the replica when it resumes, which then
		// continues with a partial resync.
		fill(m.c, "more:", 2000)
		full := m.stat("sync_full")
		w := watchReplica(r.Addr())
		Expect(r.Session.Command.Process.Signal(syscall.SIGCONT)).To(Succeed())
		waitSynced(m, r)
		w.end()
		Expect(m.stat("sync_full")).To(Equal(full + 1))
		// Async loading: never -LOADING, the old data (whatever part of
		// the stream it had applied) until the new dataset is swapped in.
		Expect(w.loadingErrs).To(BeZero())
		Expect(w.asyncLoading).To(BeNumerically(">", 0))
		Expect(w.loading).To(BeZero())
		w.mu.Lock()
		Expect(len(w.sizes)).To(BeNumerically("<=", 2), "DBSIZE seen: %v", w.sizes)
		Expect(w.sizes[len(w.sizes)-1]).To(Equal(int64(bigKeys + 2000)))
		w.mu.Unlock()
		Expect(r.dump()).To(Equal(m.dump()))
	})

	// on-empty-db (an empty replica) and swapdb parse the socket: a load
	// cut short flushes the half-loaded data, or with swapdb discards the
	// temporary keyspace and keeps the old data.
	for _, mode := range []string{"disabled", "on-empty-db", "swapdb"} {
		mode := mode
		It("the master killed (SIGKILL) during a full sync: the replica keeps its old data, then syncs with the restarted master (repl-diskless-load "+mode+")", func() {
			m := startVigil()
			fill(m.c, "k:", bigKeys)
			populate(m.c, "t:")
			Expect(m.c.Save(ctx).Err()).To(Succeed())
			Expect(m.c.ConfigSet(ctx, "rdb-key-save-delay", "300").Err()).To(Succeed()) // a slow transfer
			old := 5
			if mode == "on-empty-db" {
				old = 0 // loads from the socket
			}
			r := startVigil("--repl-diskless-load", mode)
			fill(r.c, "old:", old)
			w := watchReplica(r.Addr())
			r.replicaOf(m)
			Eventually(func(g Gomega) {
				ri := r.info("replication")
				g.Expect(ri["master_sync_in_progress"]).To(Equal("1"))
				g.Expect(strconv.Atoi(ri["master_sync_read_bytes"])).To(BeNumerically(">", 0))
			}).WithTimeout(syncTimeout).WithPolling(20 * time.Millisecond).Should(Succeed())
			m.Kill()
			Eventually(func() string { return r.replField("master_sync_in_progress") }).
				WithTimeout(syncTimeout).WithPolling(50 * time.Millisecond).Should(Equal("0"))
			Expect(r.c.DBSize(ctx).Val()).To(Equal(int64(old)))
			m = restartAt(m)
			Expect(m.c.DBSize(ctx).Val()).To(BeNumerically(">", bigKeys))
			waitSynced(m, r)
			w.end()
			w.sizesWithin(int64(old), m.c.DBSize(ctx).Val())
			Expect(r.dump()).To(Equal(m.dump()))
		})
	}

	It("a replica killed (SIGKILL) while it loads restarts and syncs again, -LOADING meanwhile, never half the dataset", func() {
		m := startVigil()
		fill(m.c, "k:", bigKeys)
		args := []string{"--key-load-delay", "200", "--replicaof", "127.0.0.1", itoa(m.Port)}
		r := startVigil(args...)
		Eventually(func() string { return r.info("persistence")["loading"] }).
			WithTimeout(syncTimeout).WithPolling(10 * time.Millisecond).Should(Equal("1"))
		w := watchReplica(r.Addr())
		r.Kill()
		// The kill may come after the streamed RDB was renamed to
		// dump.rdb: the restart then loads it from disk first, at
		// key-load-delay per key, answering -LOADING all along (10000
		// sleeps of 200 µs last well over StartTimeout on a busy
		// machine), so it is ready once it answers at all.
		s := integration.StartServerWith(integration.ServerOptions{Dir: r.Dir, ReadyWhileLoading: true,
			Args: append([]string{"--repl-diskless-sync-delay", "0", "--port", itoa(r.Port)}, args...)})
		r = &node{Server: s, c: s.Client(2)}
		waitSynced(m, r)
		w.end()
		w.sizesWithin(0, bigKeys)
		Expect(w.loadingErrs).To(BeNumerically(">", 0))
		Expect(r.dump()).To(Equal(m.dump()))
	})

	It("the link cut mid-stream (CLIENT KILL TYPE master) while the master takes writes: partial resyncs, equal contents", func() {
		// A backlog far larger than what the writer writes while the
		// replica reconnects (one second each time): partial resyncs.
		m := startVigil("--repl-backlog-size", "256mb")
		populate(m.c, "a:")
		r := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		waitSynced(m, r)
		partial := m.stat("sync_partial_ok")
		stopWriter := writeUntilStopped(func(i int) {
			Expect(m.c.Incr(ctx, "counter").Err()).To(Succeed())
			Expect(m.c.RPush(ctx, "log", i).Err()).To(Succeed())
			Expect(m.c.Set(ctx, "s:"+itoa(i%100), i, 0).Err()).To(Succeed())
		})
		for cut := int64(1); cut <= 3; cut++ {
			Expect(r.c.Do(ctx, "CLIENT", "KILL", "TYPE", "master").Val()).To(Equal(int64(1)))
			// Each cut ends in a partial resync (the next cut only then).
			Eventually(func() int64 { return m.stat("sync_partial_ok") }).
				WithTimeout(syncTimeout).WithPolling(20 * time.Millisecond).Should(Equal(partial + cut))
			Eventually(func() string { return r.replField("master_link_status") }).
				WithTimeout(syncTimeout).WithPolling(20 * time.Millisecond).Should(Equal("up"))
		}
		stopWriter()
		waitSynced(m, r)
		Expect(m.stat("sync_partial_ok")).To(Equal(partial + 3))
		Expect(r.dump()).To(Equal(m.dump()))
	})

	It("the link cut by a proxy mid-transfer and mid-stream: old data kept, then equal contents", func() {
		m := startVigil()
		fill(m.c, "k:", bigKeys)
		Expect(m.c.ConfigSet(ctx, "rdb-key-save-delay", "300").Err()).To(Succeed())
		p := startProxy(m.Addr())
		r := startVigil()
		fill(r.c, "old:", 5)
		w := watchReplica(r.Addr())
		Expect(r.c.Do(ctx, "REPLICAOF", "127.0.0.1", p.port()).Err()).To(Succeed())
		Eventually(func(g Gomega) {
			ri := r.info("replication")
			g.Expect(ri["master_sync_in_progress"]).To(Equal("1"))
			g.Expect(strconv.Atoi(ri["master_sync_read_bytes"])).To(BeNumerically(">", 0))
		}).WithTimeout(syncTimeout).WithPolling(20 * time.Millisecond).Should(Succeed())
		p.cut() // mid-transfer
		Expect(m.c.ConfigSet(ctx, "rdb-key-save-delay", "0").Err()).To(Succeed())
		waitSynced(m, r)
		stopWriter := writeUntilStopped(func(i int) {
			Expect(m.c.Set(ctx, "w:"+itoa(i%500), i, 0).Err()).To(Succeed())
		})
		Eventually(func() int64 { return m.stat("total_commands_processed") }).Should(BeNumerically(">", 100))
		syncs := func() int64 { return m.stat("sync_partial_ok") + m.stat("sync_full") }
		before := syncs()
		p.cut() // mid-stream
		Eventually(syncs).WithTimeout(syncTimeout).WithPolling(20 * time.Millisecond).Should(BeNumerically(">", before))
		Eventually(func() string { return r.replField("master_link_status") }).
			WithTimeout(syncTimeout).WithPolling(20 * time.Millisecond).Should(Equal("up"))
		stopWriter()
		waitSynced(m, r)
		w.end()
		w.mu.Lock()
		for _, n := range w.sizes {
			Expect(n == 5 || n >= bigKeys).To(BeTrue(), "DBSIZE %d (seen: %v): a partial dataset", n, w.sizes)
		}
		w.mu.Unlock()
		Expect(r.dump()).To(Equal(m.dump()))
	})
})
