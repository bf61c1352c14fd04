package docker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/client"
	"github.com/vigil-kv/vigil/server/geo"
)

const (
	masterName = "mymaster"
	imageTag   = "vigil:itest"
	// forgetAfter is the sentinels' forget-after-milliseconds here
	// (VIGIL_FORGET_AFTER): longer than any fault below lasts after its
	// failover, so an old master coming back at its address is still
	// known and demoted, short enough to wait for.
	forgetAfter = 20000
)

// deployment is one docker-compose project of configs/examples/compose.yaml.
type deployment struct {
	root    string // the repository
	project string
	subnet  string            // first three octets
	nodes   map[string]string // server address -> its container
	sents   map[string]string // sentinel address -> its container
	extra   []string          // containers started outside compose (replacements)
}

func newDeployment(root, project, subnet string) *deployment {
	d := &deployment{root: root, project: project, subnet: subnet, nodes: map[string]string{}, sents: map[string]string{}}
	for i, svc := range []string{"master", "replica1", "replica2"} {
		d.nodes[d.ip(10+i)+":6379"] = d.container(svc)
	}
	for i := 1; i <= 3; i++ {
		d.sents[d.ip(20+i)+":26379"] = d.container(fmt.Sprintf("sentinel%d", i))
	}
	return d
}

func (d *deployment) ip(last int) string { return fmt.Sprintf("%s.%d", d.subnet, last) }

// servers are the live server addresses and their containers.
func (d *deployment) servers() map[string]string { return d.nodes }

// sentinels are the live sentinels' addresses, sorted.
func (d *deployment) sentinels() []string {
	var out []string
	for a := range d.sents {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

func (d *deployment) container(service string) string { return d.project + "_" + service + "_1" }
func (d *deployment) network() string                 { return d.project + "_vigil" }

func (d *deployment) compose(args ...string) (string, error) {
	full := append([]string{"-f", filepath.Join(d.root, "configs/examples/compose.yaml"), "-p", d.project}, args...)
	cmd := exec.Command("docker-compose", full...)
	cmd.Env = append(os.Environ(), "VIGIL_IMAGE="+imageTag, "VIGIL_SUBNET="+d.subnet, fmt.Sprintf("VIGIL_FORGET_AFTER=%d", forgetAfter))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func run(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

func docker(args ...string) {
	GinkgoHelper()
	out, err := run("docker", args...)
	Expect(err).NotTo(HaveOccurred(), "docker %s: %s", strings.Join(args, " "), out)
}

// engineSkip says why the suite cannot run here ("" = it can).
func engineSkip() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		return fmt.Sprintf("no Docker engine answers (docker version: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	if _, err := exec.LookPath("docker-compose"); err != nil {
		return "docker-compose not installed (apt-get install docker-compose)"
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "go not on PATH: cannot build the image"
	}
	return ""
}

var _ = Describe("Containers", Ordered, Label("docker", "slow"), func() {
	var (
		d      *deployment
		c      *client.Client
		writes atomic.Int64 // acknowledged client writes
		stop   context.CancelFunc
		wg     sync.WaitGroup
	)
	ctx := context.Background()

	BeforeAll(func() {
		if why := engineSkip(); why != "" {
			Skip(why)
		}
		root, err := filepath.Abs("../..")
		Expect(err).NotTo(HaveOccurred())
		n := os.Getpid()
		d = newDeployment(root, fmt.Sprintf("vigiltest%d", n), fmt.Sprintf("172.30.%d", 100+n%150))

		By("building the image FROM scratch")
		out, err := run(filepath.Join(root, "scripts/docker-image.sh"), imageTag)
		Expect(err).NotTo(HaveOccurred(), "scripts/docker-image.sh: %s", out)

		// Registered before up so a half-started project is removed too.
		DeferCleanup(func() {
			if stop != nil {
				stop()
				wg.Wait()
			}
			if c != nil {
				c.Close()
			}
			for _, ct := range d.servers() {
				_, _ = run("docker", "unpause", ct) // a failed spec may leave one paused
			}
			for _, ct := range d.extra {
				_, _ = run("docker", "rm", "-f", ct)
			}
			out, err := d.compose("down", "-v", "-t", "1")
			if err != nil {
				GinkgoWriter.Printf("docker-compose down: %v: %s\n", err, out)
			}
			_, _ = run("docker", "network", "rm", d.network())
			_, _ = run("docker", "rmi", imageTag)
		})

		By("bringing the deployment up: project " + d.project + ", subnet " + d.subnet + ".0/24")
		out, err = d.compose("up", "-d")
		Expect(err).NotTo(HaveOccurred(), "docker-compose up: %s", out)

		waitHealthy(ctx, d, d.ip(10)+":6379", 3)
		for _, s := range d.sentinels() {
			tune(ctx, s)
		}

		c, err = client.New(client.Options{MasterName: masterName, SentinelAddrs: d.sentinels(),
			MasterWait: 30 * time.Second, DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error { return c.Set(ctx, "hello", "world", 0).Err() }).
			WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

		// A writer that runs through every fault: the counter only grows on
		// acknowledged writes; each fault checks that it grows again.
		var bg context.Context
		bg, stop = context.WithCancel(ctx)
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			for bg.Err() == nil {
				cctx, cancel := context.WithTimeout(bg, 3*time.Second)
				if c.Incr(cctx, "counter").Err() == nil {
					writes.Add(1)
				}
				cancel()
				select {
				case <-bg.Done():
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
	})

	// waitFailover waits for the sentinels to agree on a master other than
	// old, and for the client to follow it: its MasterAddr, acknowledged
	// writes, a write read back from the new master.
	waitFailover := func(old string) string {
		GinkgoHelper()
		By("waiting for the sentinels to agree on a new master")
		var next string
		Eventually(func(g Gomega) {
			next = agreedMasterG(g, ctx, d)
			g.Expect(next).NotTo(Equal(old))
			g.Expect(roleOf(ctx, next)).To(Equal("master"))
		}).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())

		By("checking the client follows it: MasterAddr and acknowledged writes")
		Eventually(func(g Gomega) {
			addr, err := c.MasterAddr(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(addr).To(Equal(next))
		}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		before := writes.Load()
		Eventually(writes.Load).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(BeNumerically(">", before+5))
		key := "after-" + strings.ReplaceAll(old, ":", "-")
		Expect(c.Set(ctx, key, "ok", 0).Err()).To(Succeed())
		rdb := redis.NewClient(&redis.Options{Addr: next})
		defer rdb.Close()
		Expect(rdb.Get(ctx, key).Val()).To(Equal("ok"))
		return next
	}

	// fault injects a fault into the current master's container, waits for
	// the failover, lifts the fault and waits for the old master to rejoin.
	fault := func(inject func(container string), lift func(container string)) {
		old := agreedMaster(ctx, d)
		container := d.servers()[old]
		Expect(container).NotTo(BeEmpty(), "master %s is none of the deployment's servers", old)

		By(fmt.Sprintf("injecting the fault into %s (%s)", container, old))
		inject(container)

		next := waitFailover(old)

		By(fmt.Sprintf("lifting the fault on %s", container))
		lift(container)

		By("waiting for the old master to rejoin as a replica and for no stale entry")
		waitHealthy(ctx, d, next, 3)
		Eventually(func(g Gomega) {
			g.Expect(roleOf(ctx, old)).To(Equal("slave"))
		}).WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
		addr, err := c.MasterAddr(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(addr).To(Equal(next))
		before := writes.Load()
		Eventually(writes.Load).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(BeNumerically(">", before+5))
	}

	It("stores geo distances with redis-server's digits (the image's vigil-server links glibc's libm)", func() {
		if !geo.SystemLibm {
			Skip("this test binary is built without cgo: no glibc distance to compare with")
		}
		// Points whose correctly rounded distance from the centre differs
		// from glibc's in the last bit (as TestGeoStoreDistSystemLibm picks
		// them; there SystemDistance is checked against redis-server's).
		const clon, clat = 15.0, 37.0
		rng := rand.New(rand.NewPCG(7, 11))
		want := map[string]float64{}
		var locs []*redis.GeoLocation
		for tries := 0; len(locs) < 20 && tries < 2_000_000; tries++ {
			lon, lat := clon+rng.Float64()*4-2, clat+rng.Float64()*4-2
			dlon, dlat, ok := geo.DecodeScore(float64(geo.Score(lon, lat)))
			if !ok || geo.Distance(clon, clat, dlon, dlat) == geo.SystemDistance(clon, clat, dlon, dlat) {
				continue
			}
			name := "m" + strconv.Itoa(len(locs))
			locs = append(locs, &redis.GeoLocation{Name: name, Longitude: lon, Latitude: lat})
			want[name] = geo.SystemDistance(clon, clat, dlon, dlat)
		}
		if len(locs) == 0 {
			Skip("this libm's distances are all correctly rounded: nothing to tell apart")
		}
		Expect(c.GeoAdd(ctx, "geo-pts", locs...).Err()).To(Succeed())
		Expect(c.GeoSearchStore(ctx, "geo-pts", "geo-dist", &redis.GeoSearchStoreQuery{
			GeoSearchQuery: redis.GeoSearchQuery{Longitude: clon, Latitude: clat, Radius: 400000, RadiusUnit: "m"},
			StoreDist:      true,
		}).Err()).To(Succeed())
		got, err := c.ZRangeWithScores(ctx, "geo-dist", 0, -1).Result()
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(len(locs)))
		for _, z := range got {
			Expect(z.Score).To(Equal(want[z.Member.(string)]), "member %v", z.Member)
		}
	})

	It("fails over when the master's container is SIGKILLed (docker kill) and takes it back", func() {
		fault(func(ct string) { docker("kill", "-s", "KILL", ct) }, func(ct string) { docker("start", ct) })
	})

	It("fails over when the master's container is frozen (docker pause) and takes it back", func() {
		fault(func(ct string) { docker("pause", ct) }, func(ct string) { docker("unpause", ct) })
	})

	It("fails over when the master's container is cut off its network (docker network disconnect) and takes it back", func() {
		var ip string
		fault(func(ct string) {
			out, err := run("docker", "inspect", "-f", "{{(index .NetworkSettings.Networks \""+d.network()+"\").IPAddress}}", ct)
			Expect(err).NotTo(HaveOccurred(), "docker inspect: %s", out)
			ip = strings.TrimSpace(out)
			docker("network", "disconnect", "-f", d.network(), ct)
		}, func(ct string) { docker("network", "connect", "--ip", ip, d.network(), ct) })
	})

	It("keeps a sentinel's state when its container is SIGKILLed and restarted with docker start", func() {
		master := agreedMaster(ctx, d)
		addr := d.sentinels()[2]
		ct := d.sents[addr]
		By("SIGKILL and docker start of " + ct)
		docker("kill", "-s", "KILL", ct)
		docker("start", ct)
		tune(ctx, addr)
		waitHealthy(ctx, d, master, 3)
		conf := sentinelConf(ct)
		// The file's monitor line (the master after the failovers above)
		// won over the command line's, which names the first master.
		Expect(regexp.MustCompile(`(?m)^sentinel monitor `).FindAllString(conf, -1)).To(HaveLen(1), "%s:\n%s", ct, conf)
		host, port, _ := strings.Cut(master, ":")
		Expect(conf).To(MatchRegexp(`(?m)^sentinel monitor %s %s %s 2$`, masterName, regexp.QuoteMeta(host), port), ct)
		out, err := run("docker", "logs", ct)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).NotTo(ContainSubstring("Duplicate master name"))
	})

	It("follows the master when its container is replaced by one with a new address, and forgets the old addresses", func() {
		old := agreedMaster(ctx, d)
		oldCt := d.servers()[old]
		Expect(oldCt).NotTo(BeEmpty())
		oldSentinel := d.sentinels()[2]
		oldSentinelCt := d.sents[oldSentinel]

		By(fmt.Sprintf("SIGKILL of the master's container %s (%s), for good: a pod that dies", oldCt, old))
		docker("kill", "-s", "KILL", oldCt)
		next := waitFailover(old)
		docker("rm", "-f", oldCt)
		delete(d.nodes, old)

		// What a pod's start script does: ask the sentinels for the master
		// and start as its replica, announcing the pod's own address.
		newServer := d.ip(13) + ":6379"
		ct := d.project + "_replacement_server"
		By(fmt.Sprintf("a replacement server container %s at a new address %s, replica of %s", ct, newServer, next))
		nextHost, nextPort, _ := strings.Cut(next, ":")
		d.extra = append(d.extra, ct)
		docker("run", "-d", "--name", ct, "--network", d.network(), "--ip", d.ip(13), imageTag,
			"vigil-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--port", "6379",
			"--replica-announce-ip", d.ip(13), "--replicaof", nextHost, nextPort)
		d.nodes[newServer] = ct

		By(fmt.Sprintf("the sentinel container %s (%s) replaced too, by a new one at a new address", oldSentinelCt, oldSentinel))
		docker("kill", "-s", "KILL", oldSentinelCt)
		docker("rm", "-f", oldSentinelCt)
		delete(d.sents, oldSentinel)
		newSentinel := d.ip(24) + ":26379"
		sct := d.project + "_replacement_sentinel"
		d.extra = append(d.extra, sct)
		docker("run", "-d", "--name", sct, "--network", d.network(), "--ip", d.ip(24), imageTag,
			"vigil-sentinel", "/data/sentinel.conf", "--port", "26379",
			"--sentinel", "announce-ip", d.ip(24),
			"--sentinel", "monitor", masterName, nextHost, nextPort, "2",
			"--sentinel", "down-after-milliseconds", masterName, "2000",
			"--sentinel", "failover-timeout", masterName, "10000",
			"--sentinel", "forget-after-milliseconds", masterName, strconv.Itoa(forgetAfter))
		d.sents[newSentinel] = sct
		tune(ctx, newSentinel)

		By("after forget-after-milliseconds: every sentinel lists exactly the live servers and sentinels")
		waitHealthy(ctx, d, next, 3)
		Eventually(func(g Gomega) {
			g.Expect(roleOf(ctx, newServer)).To(Equal("slave"))
		}).WithTimeout(30 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())

		By("no config file names an old address; the two old sentinels logged -slave and -sentinel")
		oldHost, _, _ := strings.Cut(old, ":")
		oldSentHost, _, _ := strings.Cut(oldSentinel, ":")
		stale := regexp.MustCompile(fmt.Sprintf(`(?m)^sentinel known-(replica|sentinel) %s (%s|%s) `,
			masterName, regexp.QuoteMeta(oldHost), regexp.QuoteMeta(oldSentHost)))
		for _, s := range d.sentinels() {
			sc := d.sents[s]
			Eventually(func(g Gomega) {
				conf := sentinelConf(sc)
				g.Expect(stale.FindAllString(conf, -1)).To(BeEmpty(), "%s:\n%s", sc, conf)
				g.Expect(conf).To(MatchRegexp(`(?m)^sentinel known-replica %s %s 6379$`, masterName, regexp.QuoteMeta(d.ip(13))), sc)
			}).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
			if s == newSentinel {
				continue
			}
			out, err := run("docker", "logs", sc)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(ContainSubstring("-slave slave "+old+" "+oldHost), sc)
			Expect(out).To(ContainSubstring("-sentinel sentinel "), sc)
		}

		By("the client still follows the master")
		addr, err := c.MasterAddr(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(addr).To(Equal(next))
		before := writes.Load()
		Eventually(writes.Load).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(BeNumerically(">", before+5))
	})
})

// sentinelConf is /data/sentinel.conf of a container (docker cp: the image
// has no shell to cat it).
func sentinelConf(container string) string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	docker("cp", container+":/data/sentinel.conf", dir)
	b, err := os.ReadFile(filepath.Join(dir, "sentinel.conf"))
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

// roleOf is the first element of ROLE at addr ("" when it does not answer).
func roleOf(ctx context.Context, addr string) string {
	rdb := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	defer rdb.Close()
	v, err := rdb.Do(ctx, "ROLE").Slice()
	if err != nil || len(v) == 0 {
		return ""
	}
	s, _ := v[0].(string)
	return s
}

// tune sets the timers of the sentinel at addr with SENTINEL DEBUG, once it
// answers: INFO every second and hellos every 500 ms instead of every 10 s
// and 2 s, so that an old master that comes back is demoted in about 2 s
// (4 hello periods after it reports role:master) rather than 8 to 18 s, and
// links are re-made after 2 s; TILT lasts 3 s. Only the waits get shorter:
// the compose file's deployment keeps the defaults. Not persisted: a
// restarted sentinel is tuned again.
func tune(ctx context.Context, addr string) {
	GinkgoHelper()
	sc := sentinelClient(addr)
	defer sc.Close()
	Eventually(func() (string, error) {
		cmd := redis.NewStatusCmd(ctx, "SENTINEL", "DEBUG", "info-period", "1000", "publish-period", "500",
			"min-link-reconnect-period", "2000", "tilt-period", "3000")
		_ = sc.Process(ctx, cmd)
		return cmd.Result()
	}).WithTimeout(30*time.Second).WithPolling(250*time.Millisecond).Should(Equal("OK"), "SENTINEL DEBUG on %s", addr)
}

func sentinelClient(addr string) *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
}

func agreedMaster(ctx context.Context, d *deployment) string {
	GinkgoHelper()
	var m string
	Eventually(func(g Gomega) { m = agreedMasterG(g, ctx, d) }).
		WithTimeout(30 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
	return m
}

// agreedMasterG is the master every sentinel names.
func agreedMasterG(g Gomega, ctx context.Context, d *deployment) string {
	var addrs []string
	for _, s := range d.sentinels() {
		sc := sentinelClient(s)
		v, err := sc.GetMasterAddrByName(ctx, masterName).Result()
		sc.Close()
		g.Expect(err).NotTo(HaveOccurred(), "sentinel %s", s)
		g.Expect(v).To(HaveLen(2))
		addrs = append(addrs, v[0]+":"+v[1])
	}
	g.Expect(slices.Compact(slices.Clone(addrs))).To(HaveLen(1), "sentinels disagree: %v", addrs)
	return addrs[0]
}

// waitHealthy waits until every sentinel names master, lists exactly the
// other servers of the deployment as replicas (wantReplicas = 2 + rejoined)
// with none down or disconnected, and lists exactly the two other sentinels,
// none down: no stale entry left.
func waitHealthy(ctx context.Context, d *deployment, master string, nservers int) {
	GinkgoHelper()
	var wantReplicas []string
	for addr := range d.servers() {
		if addr != master {
			wantReplicas = append(wantReplicas, addr)
		}
	}
	slices.Sort(wantReplicas)
	Expect(wantReplicas).To(HaveLen(nservers - 1))
	Eventually(func(g Gomega) {
		g.Expect(agreedMasterG(g, ctx, d)).To(Equal(master))
		for _, s := range d.sentinels() {
			sc := sentinelClient(s)
			replicas, err := sc.Replicas(ctx, masterName).Result()
			g.Expect(err).NotTo(HaveOccurred())
			sentinels, err2 := sc.Sentinels(ctx, masterName).Result()
			sc.Close()
			g.Expect(err2).NotTo(HaveOccurred())

			var got []string
			for _, r := range replicas {
				got = append(got, r["ip"]+":"+r["port"])
				g.Expect(r["flags"]).To(Equal("slave"), "sentinel %s: replica %s", s, r["name"])
				g.Expect(r["master-link-status"]).To(Equal("ok"), "sentinel %s: replica %s", s, r["name"])
				g.Expect(r["master-host"]+":"+r["master-port"]).To(Equal(master), "sentinel %s: replica %s", s, r["name"])
			}
			slices.Sort(got)
			g.Expect(got).To(Equal(wantReplicas), "sentinel %s: known replicas", s)

			var others []string
			for _, o := range sentinels {
				others = append(others, o["ip"]+":"+o["port"])
				g.Expect(o["flags"]).To(Equal("sentinel"), "sentinel %s: sentinel %s", s, o["name"])
			}
			want := slices.DeleteFunc(slices.Clone(d.sentinels()), func(x string) bool { return x == s })
			slices.Sort(others)
			g.Expect(others).To(Equal(want), "sentinel %s: known sentinels", s)
		}
	}).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
}
