package sentinel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

// Environment variables that choose the binaries (see doc.go).
const (
	SentinelBinEnv      = "VIGIL_SENTINEL_BIN"
	DataServerBinEnv    = "VIGIL_DATA_SERVER_BIN"
	RedisSentinelBinEnv = "REDIS_SENTINEL_BIN"
	BenchEnv            = "VIGIL_BENCH"
	BenchRunsEnv        = "VIGIL_BENCH_RUNS"
	// BenchRefDataEnv, when set, is the data server the failover
	// benchmark's redis-sentinel runs fail over (the sentinel under test
	// keeps the suite's), so that one run compares whole stacks:
	// vigil-sentinel + vigil-server against redis-sentinel + redis-server.
	BenchRefDataEnv = "VIGIL_BENCH_REF_DATA_SERVER_BIN"
)

// Set by the suite before any spec runs.
var (
	SentinelBin      string // the sentinel under test
	SentinelSkip     string // non-empty: specs needing SentinelBin skip with it
	RedisSentinelBin string // Debian's redis-sentinel, "" when absent
	DataBin          string // master and replicas
	DataSkip         string // non-empty: every spec skips with it
)

// The monitored master's name and the per-master timers every spec uses.
const (
	MasterName      = "mym"
	DownAfter       = 2000 // ms: a new master slow to answer its first PING on a loaded machine is not failed over again
	FailoverTimeout = 5000 // ms
)

// Bounds on waits. They only bound polling; nothing is timed against them.
// They are generous because a sentinel that enters TILT (its timer starved
// for > 2 s on a loaded machine) does nothing for 30 s.
const (
	DiscoveryWait = 45 * time.Second // a few hellos (every 2 s untuned, 500 ms tuned) and INFO
	FailoverWait  = 60 * time.Second // SDOWN + ODOWN + election + promotion (+ a retry)
	ConvertWait   = 60 * time.Second // a returning old master is demoted after ~10 s (~3 s tuned)
	Poll          = 100 * time.Millisecond
)

// RequireData skips unless the data server is available.
func RequireData() {
	GinkgoHelper()
	if DataSkip != "" {
		Skip(DataSkip)
	}
}

// RequireSentinel skips unless both the data server and the sentinel under
// test are available.
func RequireSentinel() {
	GinkgoHelper()
	RequireData()
	if SentinelSkip != "" {
		Skip(SentinelSkip)
	}
}

// RequireRedisSentinel skips unless Debian's redis-sentinel is installed and
// returns its path.
func RequireRedisSentinel() string {
	GinkgoHelper()
	if RedisSentinelBin == "" {
		Skip("redis-sentinel not installed (apt-get install redis-sentinel)")
	}
	return RedisSentinelBin
}

// KindOf names a sentinel binary for reports: "redis-sentinel" or
// "vigil-sentinel".
func KindOf(bin string) string {
	if strings.HasPrefix(filepath.Base(bin), "redis-sentinel") {
		return "redis-sentinel"
	}
	return "vigil-sentinel"
}

// IsRealSentinel reports whether the sentinel under test is Redis's own.
func IsRealSentinel() bool { return KindOf(SentinelBin) == "redis-sentinel" }

// ---------------------------------------------------------------------------
// Data servers

// Cluster is one monitored deployment: a master, its replicas and the
// sentinels watching it.
type Cluster struct {
	Master    *integration.Server
	Replicas  []*integration.Server
	Sentinels []*Sentinel
	Quorum    int
	data      map[int]*redis.Client // by port
}

// dataArgs are added to every data server: no diskless-sync delay, so a full
// resynchronisation takes milliseconds instead of 5 s.
var dataArgs = []string{"--repl-diskless-sync-delay", "0"}

// StartData starts a master and n replicas of it (--replicaof) and waits until
// the master reports every replica online.
func StartData(n int) *Cluster {
	GinkgoHelper()
	c := &Cluster{data: map[int]*redis.Client{}}
	c.Master = integration.StartServer(dataArgs...)
	c.addClient(c.Master)
	for i := 0; i < n; i++ {
		args := append(append([]string{}, dataArgs...), "--replicaof", "127.0.0.1", strconv.Itoa(c.Master.Port))
		r := integration.StartServer(args...)
		c.addClient(r)
		c.Replicas = append(c.Replicas, r)
	}
	c.waitOnline()
	return c
}

// waitOnline waits until the master reports every replica online.
func (c *Cluster) waitOnline() {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		info, err := c.Info(c.Master.Port)
		g.Expect(err).NotTo(HaveOccurred())
		for _, r := range c.Replicas {
			g.Expect(info).To(MatchRegexp(`slave\d+:ip=127\.0\.0\.1,port=%d,state=online`, r.Port))
		}
	}).WithTimeout(30*time.Second).WithPolling(50*time.Millisecond).Should(Succeed(),
		"the replicas should be online at the master")
}

func (c *Cluster) addClient(s *integration.Server) {
	opts := s.ClientOptions(2)
	opts.PoolSize = 2
	opts.ReadTimeout = 2 * time.Second
	c.data[s.Port] = integration.NewClient(opts)
}

// Data returns a client of the data server on port (RESP2, no retries).
func (c *Cluster) Data(port int) *redis.Client { return c.data[port] }

// Info returns INFO replication of the data server on port.
func (c *Cluster) Info(port int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return c.data[port].Info(ctx, "replication").Result()
}

// Replication is what INFO replication of a data server says about its role.
type Replication struct {
	Role, MasterHost, MasterPort, LinkStatus string
}

// Replication parses INFO replication of the data server on port.
func (c *Cluster) Replication(port int) (Replication, error) {
	info, err := c.Info(port)
	if err != nil {
		return Replication{}, err
	}
	return Replication{
		Role:       InfoField(info, "role"),
		MasterHost: InfoField(info, "master_host"),
		MasterPort: InfoField(info, "master_port"),
		LinkStatus: InfoField(info, "master_link_status"),
	}, nil
}

// InfoField returns the value of "key:value" in an INFO text, or "".
func InfoField(info, key string) string {
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimRight(line, "\r")
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return v
		}
	}
	return ""
}

// ExpectMaster waits until the data server on port reports role:master.
func (c *Cluster) ExpectMaster(port int) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		r, err := c.Replication(port)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(r.Role).To(Equal("master"))
	}).WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed(),
		"the server on port %d should be a master", port)
}

// ExpectReplicaOf waits until the data server on port is a replica of
// masterPort with its link up.
func (c *Cluster) ExpectReplicaOf(port, masterPort int, timeout time.Duration) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		r, err := c.Replication(port)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(r).To(Equal(Replication{
			Role: "slave", MasterHost: "127.0.0.1", MasterPort: strconv.Itoa(masterPort), LinkStatus: "up",
		}))
	}).WithTimeout(timeout).WithPolling(Poll).Should(Succeed(),
		"the server on port %d should replicate from port %d", port, masterPort)
}

// ReplicaPorts returns the ports of the replicas.
func (c *Cluster) ReplicaPorts() []int {
	var ports []int
	for _, r := range c.Replicas {
		ports = append(ports, r.Port)
	}
	return ports
}

// OtherReplica returns the replica that is not on port.
func (c *Cluster) OtherReplica(port int) *integration.Server {
	GinkgoHelper()
	for _, r := range c.Replicas {
		if r.Port != port {
			return r
		}
	}
	Fail(fmt.Sprintf("no replica other than %d", port))
	return nil
}

// ---------------------------------------------------------------------------
// Sentinels

// Sentinel is one sentinel process.
type Sentinel struct {
	*integration.Server
	Kind     string // "vigil-sentinel" or "redis-sentinel"
	ConfPath string
	SC       *redis.SentinelClient // typed SENTINEL commands (RESP3)
	C        *redis.Client         // anything else (RESP3)
	tuned    bool                  // Tune was called: Restart calls it again
}

// SentinelConfig is the configuration file a sentinel starts with.
func SentinelConfig(port, masterPort, quorum int, dir string) string {
	return fmt.Sprintf(`port %d
bind 127.0.0.1
dir %s
sentinel monitor %s 127.0.0.1 %d %d
sentinel down-after-milliseconds %s %d
sentinel failover-timeout %s %d
`, port, dir, MasterName, masterPort, quorum, MasterName, DownAfter, MasterName, FailoverTimeout)
}

// StartSentinel starts bin as a sentinel monitoring the master on masterPort
// with quorum on a free port, and waits until it answers PING.
func StartSentinel(bin string, masterPort, quorum int) *Sentinel {
	GinkgoHelper()
	for attempt := 1; ; attempt++ {
		dir := integration.TempDir()
		port := integration.FreePort()
		conf := filepath.Join(dir, "sentinel.conf")
		Expect(os.WriteFile(conf, []byte(SentinelConfig(port, masterPort, quorum, dir)), 0o644)).To(Succeed())
		s := launchSentinel(bin, conf, dir, port)
		if s.waitReady() {
			return s
		}
		log := s.Log()
		if attempt < 3 && strings.Contains(log, "already in use") {
			fmt.Fprintf(GinkgoWriter, "port %d was taken, retrying\n", port)
			continue
		}
		Fail(fmt.Sprintf("sentinel %s %s did not answer PING (exit code %d); its output:\n%s",
			bin, conf, s.Session.ExitCode(), s.Log()))
	}
}

// Restart starts the same binary again with the same configuration file (as
// the previous process left it) on the same port. The old process must have
// exited.
func (s *Sentinel) Restart() *Sentinel {
	GinkgoHelper()
	Expect(s.Session.ExitCode()).NotTo(Equal(-1), "the sentinel must be stopped before a restart")
	n := launchSentinel(s.Bin, s.ConfPath, s.Dir, s.Port)
	Expect(n.waitReady()).To(BeTrue(), "restarted sentinel did not answer PING; its output:\n%s", n.Log())
	if s.tuned {
		n.Tune()
	}
	return n
}

func launchSentinel(bin, conf, dir string, port int) *Sentinel {
	GinkgoHelper()
	logf, err := os.CreateTemp(dir, "sentinel-*.log")
	Expect(err).NotTo(HaveOccurred())
	srv := &integration.Server{Bin: bin, Port: port, Dir: dir, Args: []string{conf}, LogPath: logf.Name()}
	cmd := exec.Command(bin, conf)
	cmd.Dir = dir
	srv.Session, err = gexec.Start(cmd, logf, logf)
	Expect(err).NotTo(HaveOccurred(), "starting %s", bin)
	DeferCleanup(func() {
		if srv.Session.ExitCode() == -1 {
			srv.Session.Kill()
			Eventually(srv.Session).WithTimeout(integration.ExitTimeout).Should(gexec.Exit())
		}
		_ = logf.Close()
		if CurrentSpecReport().Failed() {
			conf, _ := os.ReadFile(conf)
			fmt.Fprintf(GinkgoWriter, "\n---- %s %s on port %d (exit code %d); config file:\n%s\n---- output:\n%s\n---- end of output\n",
				bin, srv.Args[0], port, srv.Session.ExitCode(), conf, tail(srv.Log(), 150))
		}
	})
	s := &Sentinel{Server: srv, Kind: KindOf(bin), ConfPath: conf}
	s.SC = redis.NewSentinelClient(&redis.Options{
		Addr:        srv.Addr(),
		MaxRetries:  -1,
		DialTimeout: 2 * time.Second,
		ReadTimeout: 3 * time.Second,
		PoolSize:    2,
	})
	DeferCleanup(s.SC.Close)
	s.C = integration.NewClient(&redis.Options{
		Addr:        srv.Addr(),
		MaxRetries:  -1,
		DialTimeout: 2 * time.Second,
		ReadTimeout: 3 * time.Second,
		PoolSize:    2,
	})
	return s
}

// waitReady polls until the sentinel answers PING or exits.
func (s *Sentinel) waitReady() bool {
	GinkgoHelper()
	ready := false
	Eventually(func() bool {
		if s.Session.ExitCode() != -1 {
			return true
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		ready = s.C.Ping(ctx).Err() == nil
		return ready
	}).WithTimeout(integration.StartTimeout).WithPolling(20*time.Millisecond).Should(BeTrue(),
		"sentinel on port %d neither answered PING nor exited", s.Port)
	return ready && s.Session.ExitCode() == -1
}

// Name is "<kind>:<port>" for messages.
func (s *Sentinel) Name() string { return fmt.Sprintf("%s:%d", s.Kind, s.Port) }

// MyID returns SENTINEL MYID.
func (s *Sentinel) MyID() string {
	GinkgoHelper()
	id, err := s.C.Do(context.Background(), "SENTINEL", "MYID").Text()
	Expect(err).NotTo(HaveOccurred(), "SENTINEL MYID on %s", s.Name())
	Expect(id).To(MatchRegexp(`^[0-9a-f]{40}$`))
	return id
}

// MasterAddr returns SENTINEL GET-MASTER-ADDR-BY-NAME mym as "ip:port".
func (s *Sentinel) MasterAddr() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	a, err := s.SC.GetMasterAddrByName(ctx, MasterName).Result()
	if err != nil {
		return "", err
	}
	if len(a) != 2 {
		return "", fmt.Errorf("get-master-addr-by-name: %q is not [ip, port]", a)
	}
	return net.JoinHostPort(a[0], a[1]), nil
}

// Replicas returns SENTINEL REPLICAS mym.
func (s *Sentinel) Replicas() ([]map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return s.SC.Replicas(ctx, MasterName).Result()
}

// Others returns SENTINEL SENTINELS mym.
func (s *Sentinel) Others() ([]map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return s.SC.Sentinels(ctx, MasterName).Result()
}

// Addr of a loopback port.
func Addr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// AddSentinels starts one sentinel per binary, all monitoring the master with
// quorum, and sets their timers to the scenarios' (Tune).
func (c *Cluster) AddSentinels(quorum int, bins ...string) {
	GinkgoHelper()
	c.AddUntunedSentinels(quorum, bins...)
	for _, s := range c.Sentinels[len(c.Sentinels)-len(bins):] {
		s.Tune()
	}
}

// AddUntunedSentinels is AddSentinels with the sentinels' default timers
// (hellos every 2 s, INFO every 10 s): the failover benchmark's.
func (c *Cluster) AddUntunedSentinels(quorum int, bins ...string) {
	GinkgoHelper()
	c.Quorum = quorum
	for _, bin := range bins {
		c.Sentinels = append(c.Sentinels, StartSentinel(bin, c.Master.Port, quorum))
	}
}

// Tune sets the sentinel's timers with SENTINEL DEBUG (scenarioDebug: INFO
// every second, hellos every 500 ms, links re-made after 2 s, TILT for 3 s)
// instead of the defaults, which only make the specs wait longer: discovery
// takes a few hellos, and a returning old master is demoted 4 hello periods
// after it reports role:master. They are not persisted: Restart sets them
// again.
func (s *Sentinel) Tune() {
	GinkgoHelper()
	Expect(s.C.Do(context.Background(), append([]any{"SENTINEL", "DEBUG"}, scenarioDebug...)...).Text()).
		To(Equal("OK"), "SENTINEL DEBUG on %s", s.Name())
	s.tuned = true
}

// SentinelAddrs returns the sentinels' addresses.
func (c *Cluster) SentinelAddrs() []string {
	var addrs []string
	for _, s := range c.Sentinels {
		addrs = append(addrs, s.Addr())
	}
	return addrs
}

// Times returns n copies of bin (for AddSentinels).
func Times(n int, bin string) []string {
	bins := make([]string, n)
	for i := range bins {
		bins[i] = bin
	}
	return bins
}

// PortsOf returns the sorted "port" fields of SENTINEL REPLICAS/SENTINELS
// entries.
func PortsOf(entries []map[string]string) []string {
	var ports []string
	for _, e := range entries {
		ports = append(ports, e["port"])
	}
	sort.Strings(ports)
	return ports
}

// Strs formats ports as sorted decimal strings.
func Strs(ports ...int) []string {
	var out []string
	for _, p := range ports {
		out = append(out, strconv.Itoa(p))
	}
	sort.Strings(out)
	return out
}

// WaitDiscovery waits until every sentinel knows every replica (connected,
// INFO received: flags exactly "slave" and the replica's link to its master
// "ok") and every other sentinel (by port and run id), so that a failover can
// be agreed and carried out.
func (c *Cluster) WaitDiscovery() {
	GinkgoHelper()
	ids := map[int]string{}
	for _, s := range c.Sentinels {
		ids[s.Port] = s.MyID()
	}
	for _, s := range c.Sentinels {
		Eventually(func(g Gomega) {
			reps, err := s.Replicas()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(PortsOf(reps)).To(Equal(Strs(c.ReplicaPorts()...)), "SENTINEL REPLICAS ports")
			for _, r := range reps {
				g.Expect(r).To(HaveKeyWithValue("ip", "127.0.0.1"))
				g.Expect(r).To(HaveKeyWithValue("flags", "slave"))
				g.Expect(r).To(HaveKeyWithValue("master-link-status", "ok"))
			}
			others, err := s.Others()
			g.Expect(err).NotTo(HaveOccurred())
			var want []string
			for _, o := range c.Sentinels {
				if o != s {
					want = append(want, strconv.Itoa(o.Port))
				}
			}
			sort.Strings(want)
			g.Expect(PortsOf(others)).To(Equal(want), "SENTINEL SENTINELS ports")
			for _, o := range others {
				port, _ := strconv.Atoi(o["port"])
				g.Expect(o).To(HaveKeyWithValue("ip", "127.0.0.1"))
				g.Expect(o).To(HaveKeyWithValue("runid", ids[port]))
				g.Expect(o).To(HaveKeyWithValue("flags", "sentinel"))
			}
		}).WithTimeout(DiscoveryWait).WithPolling(200*time.Millisecond).Should(Succeed(),
			"%s should discover the replicas and the other sentinels", s.Name())
	}
}

// WaitMasterAddr waits until every sentinel answers GET-MASTER-ADDR-BY-NAME
// with 127.0.0.1:port.
func (c *Cluster) WaitMasterAddr(port int, timeout time.Duration) {
	GinkgoHelper()
	for _, s := range c.Sentinels {
		Eventually(s.MasterAddr).WithTimeout(timeout).WithPolling(Poll).Should(Equal(Addr(port)),
			"%s should name the master", s.Name())
	}
}

// WaitNewMaster waits until the first sentinel names one of the replicas as
// the master, then until every sentinel agrees, and returns its port.
func (c *Cluster) WaitNewMaster() int {
	GinkgoHelper()
	var want []any
	for _, p := range c.ReplicaPorts() {
		want = append(want, Addr(p))
	}
	var addr string
	Eventually(func(g Gomega) {
		var err error
		addr, err = c.Sentinels[0].MasterAddr()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(addr).To(BeElementOf(want...))
	}).WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed(),
		"%s should name a replica as the new master", c.Sentinels[0].Name())
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	c.WaitMasterAddr(port, FailoverWait)
	return port
}

// Stop sends SIGSTOP to a process and, when the spec ends, SIGCONT (before the
// process is killed).
func Stop(s *integration.Server) {
	GinkgoHelper()
	s.Session.Signal(syscall.SIGSTOP)
	DeferCleanup(func() { s.Session.Signal(syscall.SIGCONT) })
}

// Continue sends SIGCONT.
func Continue(s *integration.Server) { s.Session.Signal(syscall.SIGCONT) }

// ---------------------------------------------------------------------------
// Sentinel events

// Event is one message a sentinel published on its own pub/sub.
type Event struct {
	From    int // the sentinel's port
	Channel string
	Payload string
	At      time.Time
}

// Events collects the events of several sentinels.
type Events struct {
	mu   sync.Mutex
	list []Event
}

// Watch subscribes (PSUBSCRIBE *) to the sentinels' events with go-redis and
// records them until the spec ends.
func Watch(sentinels ...*Sentinel) *Events {
	GinkgoHelper()
	e := &Events{}
	for _, s := range sentinels {
		e.watch(s, true, "*")
	}
	return e
}

// WatchChannels subscribes (SUBSCRIBE, as go-redis's FailoverClient does) to
// the given event channels of the sentinels.
func WatchChannels(sentinels []*Sentinel, channels ...string) *Events {
	GinkgoHelper()
	e := &Events{}
	for _, s := range sentinels {
		e.watch(s, false, channels...)
	}
	return e
}

func (e *Events) watch(s *Sentinel, pattern bool, channels ...string) {
	GinkgoHelper()
	c := integration.NewClient(&redis.Options{Addr: s.Addr(), DialTimeout: 2 * time.Second, PoolSize: 1})
	ctx := context.Background()
	var ps *redis.PubSub
	if pattern {
		ps = c.PSubscribe(ctx, channels...)
	} else {
		ps = c.Subscribe(ctx, channels...)
	}
	// Wait for the confirmations so no event after Watch returns is missed.
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for i, ch := range channels {
		msg, err := ps.Receive(rctx)
		Expect(err).NotTo(HaveOccurred(), "subscribing to %q on %s", ch, s.Name())
		Expect(msg).To(Equal(&redis.Subscription{Kind: map[bool]string{true: "psubscribe", false: "subscribe"}[pattern], Channel: ch, Count: i + 1}),
			"subscription confirmation from %s", s.Name())
	}
	ch := ps.Channel(redis.WithChannelSize(1000))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range ch {
			e.mu.Lock()
			e.list = append(e.list, Event{From: s.Port, Channel: m.Channel, Payload: m.Payload, At: time.Now()})
			e.mu.Unlock()
		}
	}()
	DeferCleanup(func() {
		_ = ps.Close()
		<-done
	})
}

// All returns a copy of the events so far.
func (e *Events) All() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.list...)
}

// Payloads returns the payloads the sentinel on port published on channel
// (port 0: any sentinel).
func (e *Events) Payloads(port int, channel string) []string {
	var out []string
	for _, ev := range e.All() {
		if ev.Channel == channel && (port == 0 || ev.From == port) {
			out = append(out, ev.Payload)
		}
	}
	return out
}

// Publishers returns the ports of the sentinels that published channel with
// a payload matching re.
func (e *Events) Publishers(channel, re string) []int {
	rx := regexp.MustCompile(re)
	seen := map[int]bool{}
	var out []int
	for _, ev := range e.All() {
		if ev.Channel == channel && rx.MatchString(ev.Payload) && !seen[ev.From] {
			seen[ev.From] = true
			out = append(out, ev.From)
		}
	}
	sort.Ints(out)
	return out
}

// String lists the events, for failure messages.
func (e *Events) String() string {
	var b strings.Builder
	for _, ev := range e.All() {
		fmt.Fprintf(&b, "%s [%d] %s %s\n", ev.At.Format("15:04:05.000"), ev.From, ev.Channel, ev.Payload)
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// A writer through go-redis's FailoverClient

// Writer writes an increasing counter through a go-redis FailoverClient in a
// paced loop and records when writes succeed.
type Writer struct {
	mu       sync.Mutex
	client   *redis.Client
	lastOK   time.Time
	lastVal  int64
	okCount  int
	maxGap   time.Duration
	lastErr  error
	firstOK  map[time.Time]time.Time // mark -> first success that started after it
	marks    []time.Time
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
}

// WriterKey is the key the writer increments.
const WriterKey = "failover-counter"

// NewFailoverClient returns a go-redis FailoverClient over the sentinels,
// closed when the spec ends. The writer uses one connection at a time; the
// large PoolSize only keeps go-redis's dial circuit breaker shut: after
// PoolSize failed dials its pool fails fast and probes once a second, which
// would round every measured pause up to that probe. Without it each dial
// asks the sentinel for the master again (about every 100 ms of DialerRetries).
func NewFailoverClient(addrs []string) *redis.Client {
	c := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:    MasterName,
		SentinelAddrs: addrs,
		DialTimeout:   time.Second,
		ReadTimeout:   time.Second,
		WriteTimeout:  time.Second,
		PoolSize:      1000,
	})
	DeferCleanup(c.Close)
	return c
}

// StartWriter starts the loop; it stops when the spec ends or on Stop.
func StartWriter(addrs []string) *Writer {
	GinkgoHelper()
	w := &Writer{client: NewFailoverClient(addrs), firstOK: map[time.Time]time.Time{}, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go w.loop(ctx)
	DeferCleanup(w.Stop)
	return w
}

func (w *Writer) loop(ctx context.Context) {
	defer GinkgoRecover()
	defer close(w.done)
	pace := time.NewTicker(10 * time.Millisecond)
	defer pace.Stop()
	for i := int64(1); ; i++ {
		start := time.Now()
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := w.client.Set(wctx, WriterKey, i, 0).Err()
		cancel()
		now := time.Now()
		w.mu.Lock()
		if err == nil {
			if !w.lastOK.IsZero() && now.Sub(w.lastOK) > w.maxGap {
				w.maxGap = now.Sub(w.lastOK)
			}
			w.lastOK, w.lastVal = now, i
			w.okCount++
			for _, m := range w.marks {
				if _, ok := w.firstOK[m]; !ok && start.After(m) {
					w.firstOK[m] = now
				}
			}
		} else {
			w.lastErr = err
		}
		w.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-pace.C:
		}
	}
}

// Stop ends the loop and waits for it.
func (w *Writer) Stop() {
	w.stopOnce.Do(func() {
		w.cancel()
		<-w.done
	})
}

// OKCount returns how many writes succeeded.
func (w *Writer) OKCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.okCount
}

// Last returns the value and time of the last successful write.
func (w *Writer) Last() (int64, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastVal, w.lastOK
}

// MaxGap returns the longest time between two successive successful writes.
func (w *Writer) MaxGap() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxGap
}

// LastErr returns the last write error.
func (w *Writer) LastErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastErr
}

// Mark records now; FirstOKAfter then reports the first write that started
// after it and succeeded.
func (w *Writer) Mark() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := time.Now()
	w.marks = append(w.marks, m)
	return m
}

// FirstOKAfter returns the completion time of the first successful write that
// started after mark, if any.
func (w *Writer) FirstOKAfter(mark time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.firstOK[mark]
	return t, ok
}

// WaitWriting waits until at least n more writes succeeded.
func (w *Writer) WaitWriting(n int, timeout time.Duration) {
	GinkgoHelper()
	base := w.OKCount()
	Eventually(w.OKCount).WithTimeout(timeout).WithPolling(20*time.Millisecond).Should(BeNumerically(">=", base+n),
		func() string {
			return fmt.Sprintf("writes through the FailoverClient should succeed (last error: %v)", w.LastErr())
		})
}

// IsNil reports whether err is go-redis's nil reply.
func IsNil(err error) bool { return errors.Is(err, redis.Nil) }

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines skipped)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
