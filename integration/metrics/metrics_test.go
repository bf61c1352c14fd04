package metrics

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

const (
	masterName = "mym"
	wait       = 60 * time.Second // bounds polling only
	poll       = 100 * time.Millisecond
)

var ctx = context.Background()

// scrape GETs /metrics on port and parses it as Prometheus does.
func scrape(port int) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// infoMap reads INFO section ("": the default sections) as field ->
// value.
func infoMap(c *redis.Client, section string) (map[string]string, error) {
	cmd := c.Info(ctx)
	if section != "" {
		cmd = c.Info(ctx, section)
	}
	s, err := cmd.Result()
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.HasPrefix(k, "#") {
			m[k] = v
		}
	}
	return m, nil
}

// sub reads "a=1,b=2" (a slave0 or cmdstat_ line) as a map.
func sub(v string) map[string]string {
	m := map[string]string{}
	for _, p := range strings.Split(v, ",") {
		if k, x, ok := strings.Cut(p, "="); ok {
			m[k] = x
		}
	}
	return m
}

func num(s string) float64 {
	switch s {
	case "ok", "up":
		return 1
	case "err", "down":
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return -12345 // never a real value: the comparison fails visibly
	}
	return f
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// value finds name{labels} in fams; a name ending in _count reads a
// histogram's sample count.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	fam := fams[name]
	histCount := false
	if fam == nil && strings.HasSuffix(name, "_count") {
		fam, histCount = fams[strings.TrimSuffix(name, "_count")], true
	}
	if fam == nil {
		return 0, false
	}
	for _, m := range fam.GetMetric() {
		got := labelsOf(m)
		if len(got) != len(labels) {
			continue
		}
		match := true
		for k, v := range labels {
			if got[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case histCount:
			return float64(m.GetHistogram().GetSampleCount()), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		}
	}
	return 0, false
}

// shape is a series' type and label names, as redis_exporter has them.
type shape struct {
	name   string
	typ    dto.MetricType
	labels []string
}

// expectShapes checks that every series is present with its type and
// exactly its label names.
func expectShapes(g Gomega, fams map[string]*dto.MetricFamily, shapes []shape) {
	for _, s := range shapes {
		fam := fams[s.name]
		g.Expect(fam).NotTo(BeNil(), "series %s missing", s.name)
		g.Expect(fam.GetType()).To(Equal(s.typ), "type of %s", s.name)
		g.Expect(fam.GetMetric()).NotTo(BeEmpty(), s.name)
		for _, m := range fam.GetMetric() {
			var names []string
			for n := range labelsOf(m) {
				names = append(names, n)
			}
			sort.Strings(names)
			want := append([]string(nil), s.labels...)
			sort.Strings(want)
			g.Expect(names).To(Equal(want), "labels of %s", s.name)
		}
	}
}

// agreement is one series and how INFO (or SENTINEL MASTERS) gives its
// labels and value.
type agreement struct {
	name   string
	labels func(kv map[string]string) map[string]string // nil: no labels
	value  func(kv map[string]string) float64
}

func field(k string) func(map[string]string) float64 {
	return func(kv map[string]string) float64 { return num(kv[k]) }
}

// expectAgree reads the source, scrapes, reads the source again: every
// series whose source value (and labels) did not move between the two
// reads must equal it. A value that moved is judged on a later round.
func expectAgree(read func() (map[string]string, error), port int, checks []agreement) {
	GinkgoHelper()
	judged := map[string]bool{}
	Eventually(func(g Gomega) {
		before, err := read()
		g.Expect(err).NotTo(HaveOccurred())
		fams, err := scrape(port)
		g.Expect(err).NotTo(HaveOccurred())
		after, err := read()
		g.Expect(err).NotTo(HaveOccurred())
		for _, c := range checks {
			var lb, la map[string]string
			if c.labels != nil {
				lb, la = c.labels(before), c.labels(after)
			}
			vb, va := c.value(before), c.value(after)
			if vb != va || fmt.Sprint(lb) != fmt.Sprint(la) {
				continue // moved meanwhile
			}
			got, ok := value(fams, c.name, lb)
			g.Expect(ok).To(BeTrue(), "series %s%v missing", c.name, lb)
			g.Expect(got).To(Equal(vb), "%s%v against what was read around the scrape", c.name, lb)
			judged[c.name] = true
		}
		for _, c := range checks {
			g.Expect(judged).To(HaveKey(c.name), "%s: its source never held still", c.name)
		}
	}).WithTimeout(wait).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// Server series, with redis_exporter's names, types and labels
// (exporter/exporter.go, info.go).
var (
	slaveLabels  = []string{"slave_ip", "slave_port", "slave_state"}
	masterLabels = []string{"master_host", "master_port"}
	masterShapes = []shape{
		{"redis_instance_info", dto.MetricType_GAUGE, []string{"role", "redis_version", "redis_build_id", "redis_mode", "os", "maxmemory_policy", "tcp_port", "run_id", "process_id", "master_replid"}},
		{"redis_commands_total", dto.MetricType_COUNTER, []string{"cmd"}},
		{"redis_commands_duration_seconds_total", dto.MetricType_COUNTER, []string{"cmd"}},
		{"redis_master_repl_offset", dto.MetricType_GAUGE, nil},
		{"redis_connected_slaves", dto.MetricType_GAUGE, nil},
		{"redis_connected_slave_lag_seconds", dto.MetricType_GAUGE, slaveLabels},
		{"redis_connected_slave_offset_bytes", dto.MetricType_GAUGE, slaveLabels},
		{"redis_replica_resyncs_full", dto.MetricType_GAUGE, nil},
		{"redis_replica_partial_resync_accepted", dto.MetricType_GAUGE, nil},
		{"redis_replica_partial_resync_denied", dto.MetricType_GAUGE, nil},
		{"redis_repl_backlog_is_active", dto.MetricType_GAUGE, nil},
		{"redis_replication_backlog_bytes", dto.MetricType_GAUGE, nil},
		{"redis_repl_backlog_first_byte_offset", dto.MetricType_GAUGE, nil},
		{"redis_repl_backlog_history_bytes", dto.MetricType_GAUGE, nil},
		{"redis_aof_enabled", dto.MetricType_GAUGE, nil},
		{"redis_aof_rewrite_in_progress", dto.MetricType_GAUGE, nil},
		{"redis_aof_rewrite_scheduled", dto.MetricType_GAUGE, nil},
		{"redis_aof_last_rewrite_duration_sec", dto.MetricType_GAUGE, nil},
		{"redis_aof_current_rewrite_duration_sec", dto.MetricType_GAUGE, nil},
		{"redis_aof_last_bgrewrite_status", dto.MetricType_GAUGE, nil},
		{"redis_aof_last_write_status", dto.MetricType_GAUGE, nil},
		{"redis_aof_last_cow_size_bytes", dto.MetricType_GAUGE, nil},
		{"redis_rdb_changes_since_last_save", dto.MetricType_GAUGE, nil},
		{"redis_rdb_bgsave_in_progress", dto.MetricType_GAUGE, nil},
		{"redis_rdb_last_save_timestamp_seconds", dto.MetricType_GAUGE, nil},
		{"redis_rdb_last_bgsave_status", dto.MetricType_GAUGE, nil},
		{"redis_rdb_last_bgsave_duration_sec", dto.MetricType_GAUGE, nil},
		{"redis_rdb_current_bgsave_duration_sec", dto.MetricType_GAUGE, nil},
		{"redis_rdb_last_cow_size_bytes", dto.MetricType_GAUGE, nil},
		{"redis_rdb_saves_total", dto.MetricType_GAUGE, nil},
		{"redis_db_keys", dto.MetricType_GAUGE, []string{"db"}},
		{"redis_db_keys_expiring", dto.MetricType_GAUGE, []string{"db"}},
		{"redis_expired_keys_total", dto.MetricType_COUNTER, nil},
		{"redis_evicted_keys_total", dto.MetricType_COUNTER, nil},
		{"redis_connected_clients", dto.MetricType_GAUGE, nil},
		{"redis_memory_used_bytes", dto.MetricType_GAUGE, nil},
		{"redis_up", dto.MetricType_GAUGE, nil},
		{"vigil_command_duration_seconds", dto.MetricType_HISTOGRAM, []string{"cmd"}},
	}
	replicaShapes = []shape{
		{"redis_instance_info", dto.MetricType_GAUGE, masterShapes[0].labels},
		{"redis_master_link_up", dto.MetricType_GAUGE, masterLabels},
		{"redis_master_last_io_seconds_ago", dto.MetricType_GAUGE, masterLabels},
		{"redis_master_sync_in_progress", dto.MetricType_GAUGE, masterLabels},
		{"redis_slave_repl_offset", dto.MetricType_GAUGE, masterLabels},
		{"redis_slave_info", dto.MetricType_GAUGE, []string{"master_host", "master_port", "read_only"}},
		{"redis_master_repl_offset", dto.MetricType_GAUGE, nil},
	}
	masterNameAddr = []string{"master_name", "master_address"}
	sentinelShapes = []shape{
		{"redis_sentinel_masters", dto.MetricType_GAUGE, nil},
		{"redis_sentinel_tilt", dto.MetricType_GAUGE, nil},
		{"redis_sentinel_running_scripts", dto.MetricType_GAUGE, nil},
		{"redis_sentinel_master_status", dto.MetricType_GAUGE, []string{"master_name", "master_address", "master_status"}},
		{"redis_sentinel_master_slaves", dto.MetricType_GAUGE, masterNameAddr},
		{"redis_sentinel_master_ok_slaves", dto.MetricType_GAUGE, masterNameAddr},
		{"redis_sentinel_master_sentinels", dto.MetricType_GAUGE, masterNameAddr},
		{"redis_sentinel_master_ok_sentinels", dto.MetricType_GAUGE, masterNameAddr},
		{"redis_sentinel_master_ckquorum_status", dto.MetricType_GAUGE, []string{"master_name", "message"}},
		{"redis_sentinel_master_config_epoch", dto.MetricType_GAUGE, masterNameAddr},
		{"vigil_sentinel_failovers_started_total", dto.MetricType_COUNTER, []string{"master_name"}},
		{"vigil_sentinel_failovers_finished_total", dto.MetricType_COUNTER, []string{"master_name"}},
		{"vigil_sentinel_failovers_aborted_total", dto.MetricType_COUNTER, []string{"master_name"}},
	}
)

// startServer starts vigil-server with a metrics port and returns it and
// the port.
func startServer(args ...string) (*integration.Server, int) {
	GinkgoHelper()
	mport := integration.FreePort()
	s := integration.StartServer(append([]string{"--metrics-port", strconv.Itoa(mport), "--repl-diskless-sync-delay", "0"}, args...)...)
	return s, mport
}

func client(port int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), Protocol: 2, DisableIdentity: true})
	DeferCleanup(c.Close)
	return c
}

// startSentinel starts vigil-sentinel monitoring the master on
// masterPort (quorum 1) with a metrics port; it returns its port and the
// metrics port.
func startSentinel(masterPort int) (port, mport int, sess *gexec.Session) {
	GinkgoHelper()
	dir := integration.TempDir()
	port, mport = integration.FreePort(), integration.FreePort()
	conf := filepath.Join(dir, "sentinel.conf")
	Expect(os.WriteFile(conf, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nmetrics-port %d\n"+
		"sentinel monitor %s 127.0.0.1 %d 1\nsentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 5000\n",
		port, dir, mport, masterName, masterPort, masterName, masterName)), 0o644)).To(Succeed())
	logf, err := os.Create(filepath.Join(dir, "sentinel.log"))
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(sentinelBin, conf)
	cmd.Dir = dir
	sess, err = gexec.Start(cmd, logf, logf)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		sess.Kill().Wait(integration.ExitTimeout)
		_ = logf.Close()
		if CurrentSpecReport().Failed() {
			b, _ := os.ReadFile(logf.Name())
			fmt.Fprintf(GinkgoWriter, "---- sentinel log\n%s\n", b)
		}
	})
	c := client(port)
	Eventually(func() error { return c.Ping(ctx).Err() }).WithTimeout(wait).WithPolling(poll).Should(Succeed())
	return port, mport, sess
}

// pairs turns a RESP2 array of alternating names and values into a map.
func pairs(v any) map[string]string {
	m := map[string]string{}
	if a, ok := v.([]any); ok {
		for i := 0; i+1 < len(a); i += 2 {
			m[fmt.Sprint(a[i])] = fmt.Sprint(a[i+1])
		}
	}
	return m
}

// sentinelState reads what the sentinel series come from: INFO (keys
// "info:..."), SENTINEL MASTERS' entry of the master ("m:..."), the count
// of replicas not s_down/o_down ("ok_slaves") and CKQUORUM.
func sentinelState(c *redis.Client) (map[string]string, error) {
	out := map[string]string{}
	info, err := infoMap(c, "")
	if err != nil {
		return nil, err
	}
	for k, v := range info {
		out["info:"+k] = v
	}
	ms, err := c.Do(ctx, "SENTINEL", "MASTERS").Slice()
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if f := pairs(m); f["name"] == masterName {
			for k, v := range f {
				out["m:"+k] = v
			}
		}
	}
	reps, err := c.Do(ctx, "SENTINEL", "REPLICAS", masterName).Slice()
	if err != nil {
		return nil, err
	}
	ok := 0
	for _, r := range reps {
		if f := pairs(r)["flags"]; !strings.Contains(f, "s_down") && !strings.Contains(f, "o_down") {
			ok++
		}
	}
	out["ok_slaves"] = strconv.Itoa(ok)
	if msg, err := c.Do(ctx, "SENTINEL", "CKQUORUM", masterName).Text(); err == nil {
		out["ckquorum"], out["ckquorum_msg"] = "1", msg
	} else {
		out["ckquorum"], out["ckquorum_msg"] = "0", strings.TrimPrefix(err.Error(), "ERR ")
	}
	return out, nil
}

var _ = Describe("metrics-port", Label("metrics"), func() {
	It("serves redis_exporter's series on vigil-server and vigil-sentinel, agreeing with INFO and SENTINEL MASTERS", func() {
		master, masterMetrics := startServer()
		replica, replicaMetrics := startServer("--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
		mc, rc := client(master.Port), client(replica.Port)
		Eventually(func(g Gomega) {
			info, err := infoMap(mc, "replication")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(info["slave0"]).To(ContainSubstring("state=online"))
		}).WithTimeout(wait).WithPolling(poll).Should(Succeed())

		By("CONFIG GET shows metrics-port; CONFIG SET refuses it (read at startup)")
		Expect(mc.ConfigGet(ctx, "metrics-port").Val()).To(Equal(map[string]string{"metrics-port": strconv.Itoa(masterMetrics)}))
		Expect(mc.ConfigSet(ctx, "metrics-port", "1").Err()).To(MatchError(ContainSubstring("can't set immutable config")))

		By("writes, reads, an error, keys in two databases, then writes stop")
		for i := 0; i < 50; i++ {
			Expect(mc.Set(ctx, fmt.Sprintf("k%d", i), i, 0).Err()).To(Succeed())
		}
		Expect(mc.Set(ctx, "ttl", "v", time.Hour).Err()).To(Succeed())
		Expect(mc.Get(ctx, "k1").Err()).To(Succeed())
		Expect(mc.Do(ctx, "SELECT", "2").Err()).To(Succeed()) // a pool connection: SELECT and SET on one
		Expect(mc.Do(ctx, "NOSUCHCOMMAND").Err()).To(HaveOccurred())
		Expect(mc.Do(ctx, "WAIT", "1", "5000").Err()).To(Succeed())

		By("the master's series: present, typed and labelled as redis_exporter's")
		Eventually(func(g Gomega) {
			fams, err := scrape(masterMetrics)
			g.Expect(err).NotTo(HaveOccurred())
			expectShapes(g, fams, masterShapes)
		}).WithTimeout(wait).WithPolling(poll).Should(Succeed())

		By("the master's values agree with INFO read around the scrape")
		slave0 := func(kv map[string]string) map[string]string {
			s := sub(kv["slave0"])
			return map[string]string{"slave_ip": s["ip"], "slave_port": s["port"], "slave_state": s["state"]}
		}
		cmdstat := func(cmd, k string) func(map[string]string) float64 {
			return func(kv map[string]string) float64 { return num(sub(kv["cmdstat_"+cmd])[k]) }
		}
		db0 := func(k string) func(map[string]string) float64 {
			return func(kv map[string]string) float64 { return num(sub(kv["db0"])[k]) }
		}
		set := func(map[string]string) map[string]string { return map[string]string{"cmd": "set"} }
		expectAgree(func() (map[string]string, error) { return infoMap(mc, "everything") }, masterMetrics, []agreement{
			{"redis_instance_info", func(kv map[string]string) map[string]string {
				return map[string]string{"role": kv["role"], "redis_version": kv["redis_version"], "redis_build_id": kv["redis_build_id"],
					"redis_mode": kv["redis_mode"], "os": kv["os"], "maxmemory_policy": kv["maxmemory_policy"], "tcp_port": kv["tcp_port"],
					"run_id": kv["run_id"], "process_id": kv["process_id"], "master_replid": kv["master_replid"]}
			}, func(map[string]string) float64 { return 1 }},
			{"redis_master_repl_offset", nil, field("master_repl_offset")},
			{"redis_connected_slaves", nil, field("connected_slaves")},
			{"redis_connected_slave_offset_bytes", slave0, func(kv map[string]string) float64 { return num(sub(kv["slave0"])["offset"]) }},
			{"redis_connected_slave_lag_seconds", slave0, func(kv map[string]string) float64 { return num(sub(kv["slave0"])["lag"]) }},
			{"redis_replica_resyncs_full", nil, field("sync_full")},
			{"redis_replica_partial_resync_accepted", nil, field("sync_partial_ok")},
			{"redis_replica_partial_resync_denied", nil, field("sync_partial_err")},
			{"redis_repl_backlog_is_active", nil, field("repl_backlog_active")},
			{"redis_replication_backlog_bytes", nil, field("repl_backlog_size")},
			{"redis_repl_backlog_first_byte_offset", nil, field("repl_backlog_first_byte_offset")},
			{"redis_repl_backlog_history_bytes", nil, field("repl_backlog_histlen")},
			{"redis_rdb_changes_since_last_save", nil, field("rdb_changes_since_last_save")},
			{"redis_rdb_bgsave_in_progress", nil, field("rdb_bgsave_in_progress")},
			{"redis_rdb_last_save_timestamp_seconds", nil, field("rdb_last_save_time")},
			{"redis_rdb_last_bgsave_status", nil, field("rdb_last_bgsave_status")},
			{"redis_aof_enabled", nil, field("aof_enabled")},
			{"redis_aof_last_write_status", nil, field("aof_last_write_status")},
			{"redis_commands_total", set, cmdstat("set", "calls")},
			{"redis_commands_duration_seconds_total", set, func(kv map[string]string) float64 { return cmdstat("set", "usec")(kv) / 1e6 }},
			{"vigil_command_duration_seconds_count", set, cmdstat("set", "calls")},
			{"redis_db_keys", func(map[string]string) map[string]string { return map[string]string{"db": "db0"} }, db0("keys")},
			{"redis_db_keys_expiring", func(map[string]string) map[string]string { return map[string]string{"db": "db0"} }, db0("expires")},
			{"redis_expired_keys_total", nil, field("expired_keys")},
			{"redis_evicted_keys_total", nil, field("evicted_keys")},
			{"redis_keyspace_hits_total", nil, field("keyspace_hits")},
			{"redis_connected_clients", nil, field("connected_clients")},
			{"redis_memory_used_bytes", nil, field("used_memory")},
			{"redis_errors_total", func(map[string]string) map[string]string { return map[string]string{"err": "ERR"} },
				func(kv map[string]string) float64 { return num(sub(kv["errorstat_ERR"])["count"]) }},
		})

		By("the replica's series")
		Eventually(func(g Gomega) {
			fams, err := scrape(replicaMetrics)
			g.Expect(err).NotTo(HaveOccurred())
			expectShapes(g, fams, replicaShapes)
		}).WithTimeout(wait).WithPolling(poll).Should(Succeed())
		link := func(kv map[string]string) map[string]string {
			return map[string]string{"master_host": kv["master_host"], "master_port": kv["master_port"]}
		}
		expectAgree(func() (map[string]string, error) { return infoMap(rc, "everything") }, replicaMetrics, []agreement{
			{"redis_master_link_up", link, field("master_link_status")},
			{"redis_master_sync_in_progress", link, field("master_sync_in_progress")},
			{"redis_master_last_io_seconds_ago", link, field("master_last_io_seconds_ago")},
			{"redis_slave_repl_offset", link, field("slave_repl_offset")},
			{"redis_master_repl_offset", nil, field("master_repl_offset")},
			{"redis_slave_info", func(kv map[string]string) map[string]string {
				return map[string]string{"master_host": kv["master_host"], "master_port": kv["master_port"], "read_only": kv["slave_read_only"]}
			}, func(map[string]string) float64 { return 1 }},
			{"redis_db_keys", func(map[string]string) map[string]string { return map[string]string{"db": "db0"} }, db0("keys")},
		})

		By("the sentinel's series agree with INFO, SENTINEL MASTERS, REPLICAS and CKQUORUM")
		sport, smetrics, _ := startSentinel(master.Port)
		sc := client(sport)
		Expect(sc.Do(ctx, "SENTINEL", "CONFIG", "GET", "metrics-port").Val()).To(ContainElement(strconv.Itoa(smetrics)))
		Expect(sc.Do(ctx, "SENTINEL", "CONFIG", "SET", "metrics-port", "1").Err()).To(HaveOccurred())
		Eventually(func(g Gomega) {
			st, err := sentinelState(sc)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(st["m:num-slaves"]).To(Equal("1"))
			fams, err := scrape(smetrics)
			g.Expect(err).NotTo(HaveOccurred())
			expectShapes(g, fams, sentinelShapes)
		}).WithTimeout(wait).WithPolling(poll).Should(Succeed())
		nameAddr := func(kv map[string]string) map[string]string {
			return map[string]string{"master_name": masterName, "master_address": kv["m:ip"] + ":" + kv["m:port"]}
		}
		infoMaster := func(k string) func(map[string]string) float64 {
			return func(kv map[string]string) float64 { return num(sub(kv["info:master0"])[k]) }
		}
		sentinelChecks := []agreement{
			{"redis_sentinel_masters", nil, field("info:sentinel_masters")},
			{"redis_sentinel_tilt", nil, field("info:sentinel_tilt")},
			{"redis_sentinel_running_scripts", nil, field("info:sentinel_running_scripts")},
			{"redis_sentinel_master_status", func(kv map[string]string) map[string]string {
				m := sub(kv["info:master0"])
				return map[string]string{"master_name": m["name"], "master_address": m["address"], "master_status": m["status"]}
			}, func(kv map[string]string) float64 { return num(sub(kv["info:master0"])["status"]) }},
			{"redis_sentinel_master_slaves", nameAddr, infoMaster("slaves")},
			{"redis_sentinel_master_sentinels", nameAddr, infoMaster("sentinels")},
			{"redis_sentinel_master_ok_slaves", nameAddr, field("ok_slaves")},
			{"redis_sentinel_master_ok_sentinels", nameAddr, func(kv map[string]string) float64 { return num(kv["m:num-other-sentinels"]) + 1 }},
			{"redis_sentinel_master_config_epoch", nameAddr, field("m:config-epoch")},
			{"redis_sentinel_master_setting_ckquorum", nameAddr, field("m:quorum")},
			{"redis_sentinel_master_setting_down_after_milliseconds", nameAddr, field("m:down-after-milliseconds")},
			{"redis_sentinel_master_ckquorum_status", func(kv map[string]string) map[string]string {
				return map[string]string{"master_name": masterName, "message": kv["ckquorum_msg"]}
			}, field("ckquorum")},
		}
		readSentinel := func() (map[string]string, error) { return sentinelState(sc) }
		expectAgree(readSentinel, smetrics, sentinelChecks)

		By("a failover: the sentinel counts it, times its phases, and follows the new master")
		master.Session.Kill()
		Eventually(master.Session).WithTimeout(integration.ExitTimeout).Should(gexec.Exit())
		Eventually(func(g Gomega) {
			fams, err := scrape(smetrics)
			g.Expect(err).NotTo(HaveOccurred())
			mn := map[string]string{"master_name": masterName}
			n, ok := value(fams, "vigil_sentinel_failovers_finished_total", mn)
			g.Expect(ok).To(BeTrue())
			g.Expect(n).To(Equal(1.0))
			started, _ := value(fams, "vigil_sentinel_failovers_started_total", mn)
			aborted, _ := value(fams, "vigil_sentinel_failovers_aborted_total", mn)
			g.Expect(started).To(Equal(1 + aborted))
			for _, p := range []string{"wait_start", "select_replica", "send_replicaof_noone", "wait_promotion", "reconf_replicas", "total"} {
				_, ok := value(fams, "vigil_sentinel_last_failover_phase_seconds", map[string]string{"master_name": masterName, "phase": p})
				g.Expect(ok).To(BeTrue(), "phase %s", p)
			}
		}).WithTimeout(wait).WithPolling(poll).Should(Succeed())
		Eventually(func(g Gomega) {
			st, err := sentinelState(sc)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(st["m:port"]).To(Equal(strconv.Itoa(replica.Port)))
		}).WithTimeout(wait).WithPolling(poll).Should(Succeed())
		expectAgree(readSentinel, smetrics, sentinelChecks)
		// The promoted replica is a master now: its series say so.
		expectAgree(func() (map[string]string, error) { return infoMap(rc, "everything") }, replicaMetrics, []agreement{
			{"redis_master_repl_offset", nil, field("master_repl_offset")},
			{"redis_connected_slaves", nil, field("connected_slaves")},
		})
		fams, err := scrape(replicaMetrics)
		Expect(err).NotTo(HaveOccurred())
		Expect(fams).NotTo(HaveKey("redis_master_link_up"))
	})
})
