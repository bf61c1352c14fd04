package metrics

import (
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// gather runs emit through a registry, as a scrape does, and returns the
// families by name.
func gather(t *testing.T, emit func(ch chan<- prometheus.Metric)) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector(emit))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func readInfo(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func valueOf(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	return 0
}

// one returns the value of the series name{labels}, failing when the
// family is missing, has another type, or has no such series.
func one(t *testing.T, fams map[string]*dto.MetricFamily, name string, typ dto.MetricType, labels map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no series %s", name)
	}
	if f.GetType() != typ {
		t.Fatalf("%s is a %v, want %v", name, f.GetType(), typ)
	}
	for _, m := range f.GetMetric() {
		got := labelsOf(m)
		match := len(got) == len(labels)
		for k, v := range labels {
			if got[k] != v {
				match = false
			}
		}
		if match {
			return valueOf(m)
		}
	}
	var have []string
	for _, m := range f.GetMetric() {
		have = append(have, m.String())
	}
	t.Fatalf("%s has no series %v; has %v", name, labels, have)
	return 0
}

const (
	gauge   = dto.MetricType_GAUGE
	counter = dto.MetricType_COUNTER
)

// TestMasterInfo maps the INFO everything of a real redis-server 7.0.15
// master with one replica (testdata) as redis_exporter does.
func TestMasterInfo(t *testing.T) {
	info := readInfo(t, "redis-7.0.15-master.info")
	fams := gather(t, func(ch chan<- prometheus.Metric) { emitInfo(ch, info, 2e9) })
	none := map[string]string{}
	for _, c := range []struct {
		name   string
		typ    dto.MetricType
		labels map[string]string
		want   float64
	}{
		{"redis_master_repl_offset", gauge, none, 160},
		{"redis_connected_slaves", gauge, none, 1},
		{"redis_connected_slave_offset_bytes", gauge, map[string]string{"slave_ip": "127.0.0.1", "slave_port": "28022", "slave_state": "online"}, 160},
		{"redis_connected_slave_lag_seconds", gauge, map[string]string{"slave_ip": "127.0.0.1", "slave_port": "28022", "slave_state": "online"}, 1},
		{"redis_replica_resyncs_full", gauge, none, 1},
		{"redis_replica_partial_resync_accepted", gauge, none, 0},
		{"redis_replica_partial_resync_denied", gauge, none, 0},
		{"redis_repl_backlog_is_active", gauge, none, 1},
		{"redis_replication_backlog_bytes", gauge, none, 1048576},
		{"redis_repl_backlog_first_byte_offset", gauge, none, 1},
		{"redis_repl_backlog_history_bytes", gauge, none, 160},
		{"redis_second_repl_offset", gauge, none, -1},
		{"redis_commands_total", counter, map[string]string{"cmd": "set"}, 3},
		{"redis_commands_total", counter, map[string]string{"cmd": "config|get"}, 1},
		{"redis_commands_duration_seconds_total", counter, map[string]string{"cmd": "set"}, 206e-6},
		{"redis_commands_failed_calls_total", counter, map[string]string{"cmd": "set"}, 0},
		{"redis_commands_rejected_calls_total", counter, map[string]string{"cmd": "set"}, 0},
		{"redis_errors_total", counter, map[string]string{"err": "ERR"}, 1},
		{"redis_db_keys", gauge, map[string]string{"db": "db0"}, 2},
		{"redis_db_keys", gauge, map[string]string{"db": "db3"}, 1},
		{"redis_db_keys_expiring", gauge, map[string]string{"db": "db0"}, 1},
		{"redis_db_avg_ttl_seconds", gauge, map[string]string{"db": "db0"}, 99.284},
		{"redis_rdb_last_bgsave_status", gauge, none, 1},
		{"redis_rdb_bgsave_in_progress", gauge, none, 0},
		{"redis_rdb_changes_since_last_save", gauge, none, 3},
		{"redis_aof_enabled", gauge, none, 0},
		{"redis_aof_last_write_status", gauge, none, 1},
		{"redis_aof_last_bgrewrite_status", gauge, none, 1},
		{"redis_aof_rewrite_in_progress", gauge, none, 0},
		{"redis_expired_keys_total", counter, none, 0},
		{"redis_evicted_keys_total", counter, none, 0},
		{"redis_keyspace_hits_total", counter, none, 1},
		{"redis_connected_clients", gauge, none, 1},
		{"redis_up", gauge, none, 1},
		{"redis_hz", gauge, none, 10},
	} {
		if got := one(t, fams, c.name, c.typ, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	info1 := one(t, fams, "redis_instance_info", gauge, map[string]string{
		"role": "master", "redis_version": "7.0.15", "redis_build_id": infoField(info, "redis_build_id"), "redis_mode": "standalone",
		"os": infoField(info, "os"), "maxmemory_policy": "noeviction", "tcp_port": "28021",
		"run_id": infoField(info, "run_id"), "process_id": infoField(info, "process_id"), "master_replid": infoField(info, "master_replid")})
	if info1 != 1 {
		t.Errorf("redis_instance_info = %v", info1)
	}
	if fams["redis_slave_info"] != nil || fams["redis_master_link_up"] != nil {
		t.Errorf("a master has replica series")
	}
	// latency_percentiles_usec: a summary of commandstats' count and usec
	// with latencystats' percentiles as quantiles, as info.go.
	s := fams["redis_latency_percentiles_usec"]
	if s == nil || s.GetType() != dto.MetricType_SUMMARY {
		t.Fatalf("redis_latency_percentiles_usec missing or not a summary")
	}
	for _, m := range s.GetMetric() {
		if labelsOf(m)["cmd"] != "set" {
			continue
		}
		if m.Summary.GetSampleCount() != 3 || m.Summary.GetSampleSum() != 206 {
			t.Errorf("set summary: count %d sum %v", m.Summary.GetSampleCount(), m.Summary.GetSampleSum())
		}
		q := map[float64]float64{}
		for _, x := range m.Summary.GetQuantile() {
			q[x.GetQuantile()] = x.GetValue()
		}
		if q[50] != 27.007 || q[99] != 167.935 || q[99.9] != 167.935 {
			t.Errorf("set quantiles %v", q)
		}
	}
}

func infoField(info, k string) string {
	for _, l := range parseInfo(info) {
		if l.key == k {
			return l.value
		}
	}
	return ""
}

// TestReplicaInfo: the replica-only series carry master_host/master_port.
func TestReplicaInfo(t *testing.T) {
	info := readInfo(t, "redis-7.0.15-replica.info")
	fams := gather(t, func(ch chan<- prometheus.Metric) { emitInfo(ch, info, 2e9) })
	m := map[string]string{"master_host": "127.0.0.1", "master_port": "28021"}
	for name, want := range map[string]float64{
		"redis_master_link_up":             1,
		"redis_master_last_io_seconds_ago": 2,
		"redis_master_sync_in_progress":    0,
		"redis_slave_repl_offset":          160,
	} {
		if got := one(t, fams, name, gauge, m); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := one(t, fams, "redis_slave_info", gauge, map[string]string{"master_host": "127.0.0.1", "master_port": "28021", "read_only": "1"}); got != 1 {
		t.Errorf("redis_slave_info = %v", got)
	}
	up := strings.NewReplacer("master_link_status:up", "master_link_status:down").Replace(info)
	fams = gather(t, func(ch chan<- prometheus.Metric) { emitInfo(ch, up, 2e9) })
	if got := one(t, fams, "redis_master_link_up", gauge, m); got != 0 {
		t.Errorf("link down: redis_master_link_up = %v", got)
	}
}

// TestSentinel maps a real redis-sentinel 7.0.15 INFO and a master as
// SENTINEL MASTERS/REPLICAS/SENTINELS/CKQUORUM give it.
func TestSentinel(t *testing.T) {
	snap := SentinelSnapshot{
		Info: readInfo(t, "redis-sentinel-7.0.15.info"),
		Masters: []SentinelMaster{{
			Fields: map[string]string{"name": "mymaster", "ip": "127.0.0.1", "port": "28021", "quorum": "2",
				"failover-timeout": "180000", "parallel-syncs": "1", "down-after-milliseconds": "30000",
				"config-epoch": "7", "last-ok-ping-reply": "927"},
			ReplicaFlags:  []string{"slave", "s_down,slave", "slave"},
			SentinelFlags: []string{"sentinel", "s_down,sentinel"},
			CKQuorumOK:    false,
			CKQuorumText:  "NOQUORUM 1 usable Sentinels. Not enough available Sentinels to reach the specified quorum for this master",
			Failovers: FailoverStats{Started: 3, Finished: 1, Aborted: 2,
				LastPhases: []Phase{{"wait_start", 1.5}, {"select_replica", 0.1}, {"total", 1.6}}},
		}},
	}
	fams := gather(t, func(ch chan<- prometheus.Metric) { EmitSentinel(ch, snap, 2e9) })
	none := map[string]string{}
	ma := map[string]string{"master_name": "mymaster", "master_address": "127.0.0.1:28021"}
	for _, c := range []struct {
		name   string
		typ    dto.MetricType
		labels map[string]string
		want   float64
	}{
		{"redis_sentinel_masters", gauge, none, 1},
		{"redis_sentinel_tilt", gauge, none, 0},
		{"redis_sentinel_running_scripts", gauge, none, 0},
		{"redis_sentinel_scripts_queue_length", gauge, none, 0},
		{"redis_sentinel_master_status", gauge, map[string]string{"master_name": "mymaster", "master_address": "127.0.0.1:28021", "master_status": "ok"}, 1},
		{"redis_sentinel_master_slaves", gauge, ma, 0},
		{"redis_sentinel_master_sentinels", gauge, ma, 1},
		{"redis_sentinel_master_ok_slaves", gauge, ma, 2},
		{"redis_sentinel_master_ok_sentinels", gauge, ma, 2},
		{"redis_sentinel_master_ckquorum_status", gauge, map[string]string{"master_name": "mymaster", "message": snap.Masters[0].CKQuorumText}, 0},
		{"redis_sentinel_master_config_epoch", gauge, ma, 7},
		{"redis_sentinel_master_setting_ckquorum", gauge, ma, 2},
		{"redis_sentinel_master_setting_down_after_milliseconds", gauge, ma, 30000},
		{"redis_sentinel_master_last_ok_ping_reply_seconds", gauge, ma, 0.927},
		{"vigil_sentinel_failovers_started_total", counter, map[string]string{"master_name": "mymaster"}, 3},
		{"vigil_sentinel_failovers_finished_total", counter, map[string]string{"master_name": "mymaster"}, 1},
		{"vigil_sentinel_failovers_aborted_total", counter, map[string]string{"master_name": "mymaster"}, 2},
		{"vigil_sentinel_last_failover_phase_seconds", gauge, map[string]string{"master_name": "mymaster", "phase": "wait_start"}, 1.5},
		{"vigil_sentinel_last_failover_phase_seconds", gauge, map[string]string{"master_name": "mymaster", "phase": "total"}, 1.6},
		{"redis_connected_clients", gauge, none, 1},
	} {
		if got := one(t, fams, c.name, c.typ, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// An sdown master: status 0, its status in the label.
	snap.Info = strings.Replace(snap.Info, "status=ok", "status=sdown", 1)
	fams = gather(t, func(ch chan<- prometheus.Metric) { EmitSentinel(ch, snap, 2e9) })
	if got := one(t, fams, "redis_sentinel_master_status", gauge, map[string]string{"master_name": "mymaster", "master_address": "127.0.0.1:28021", "master_status": "sdown"}); got != 0 {
		t.Errorf("sdown: redis_sentinel_master_status = %v", got)
	}
}

// TestCommandHistogram: the power-of-two buckets become cumulative
// buckets at every other bound; the sum is commandstats' usec.
func TestCommandHistogram(t *testing.T) {
	b := make([]uint64, 48)
	b[0] = 1  // <= 1.024 µs
	b[1] = 2  // <= 2.048 µs: counted from the 4.096 µs bound on
	b[5] = 4  // <= 32.768 µs: from 65.536 µs
	b[40] = 1 // beyond the last bound: +Inf only
	snap := ServerSnapshot{
		Info:    "# Commandstats\r\ncmdstat_get:calls=8,usec=150,usec_per_call=18.75,rejected_calls=0,failed_calls=0\r\n",
		Latency: []CommandHistogram{{Cmd: "get", Buckets: b}},
	}
	fams := gather(t, func(ch chan<- prometheus.Metric) { EmitServer(ch, snap, 2e9) })
	f := fams["vigil_command_duration_seconds"]
	if f == nil || f.GetType() != dto.MetricType_HISTOGRAM || len(f.GetMetric()) != 1 {
		t.Fatalf("vigil_command_duration_seconds: %v", f)
	}
	h := f.GetMetric()[0].GetHistogram()
	if labelsOf(f.GetMetric()[0])["cmd"] != "get" || h.GetSampleCount() != 8 || h.GetSampleSum() != 150e-6 {
		t.Errorf("count %d sum %v labels %v", h.GetSampleCount(), h.GetSampleSum(), labelsOf(f.GetMetric()[0]))
	}
	want := map[float64]uint64{1.024e-6: 1, 4.096e-6: 3, 16.384e-6: 3, 65.536e-6: 7, 17.179869184: 7}
	got := map[float64]uint64{}
	for _, bk := range h.GetBucket() {
		got[bk.GetUpperBound()] = bk.GetCumulativeCount()
	}
	if len(got) != len(HistogramBounds) {
		t.Errorf("%d buckets, want %d", len(got), len(HistogramBounds))
	}
	for le, n := range want {
		if got[le] != n {
			t.Errorf("bucket le=%v: %d, want %d (all: %v)", le, got[le], n, got)
		}
	}
}

// TestEndpoint serves a registry on a port of the loopback address and
// reads it back as Prometheus does.
func TestEndpoint(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if _, err := Listen([]string{"127.0.0.1"}, 0); err == nil {
		t.Errorf("Listen accepted port 0")
	}
	ep, err := Listen([]string{"127.0.0.1", "-::1"}, port)
	if err != nil {
		t.Skipf("port %d taken meanwhile: %v", port, err)
	}
	defer ep.Close()
	if _, err := Listen([]string{"127.0.0.1"}, port); err == nil {
		t.Errorf("a second Listen on the same port succeeded")
	}
	info := "# Server\r\nredis_version:7.0.15\r\nuptime_in_seconds:5\r\n"
	ep.Serve(NewRegistry(ServerCollector(func() (ServerSnapshot, bool) { return ServerSnapshot{Info: info}, true })))
	resp, err := http.Get("http://" + ep.Addrs()[0].String() + Path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	var names []string
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range []string{"redis_up", "redis_uptime_in_seconds", "redis_instance_info", "go_goroutines", "process_start_time_seconds"} {
		if fams[n] == nil {
			t.Errorf("no %s in %v", n, names)
		}
	}
}
