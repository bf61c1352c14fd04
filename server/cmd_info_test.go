package server

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// infoText runs INFO args and returns the text (RESP2 bulk string).
func infoText(t *testing.T, ts *testServer, c *Client, args ...string) string {
	t.Helper()
	raw := ts.do(c, append([]string{"INFO"}, args...)...)
	if !strings.HasPrefix(raw, "$") {
		t.Fatalf("INFO %v: %q", args, raw)
	}
	return raw[strings.Index(raw, "\r\n")+2 : len(raw)-2]
}

// sectionTitles lists the "# Title" lines in order.
func sectionTitles(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\r\n") {
		if strings.HasPrefix(l, "# ") {
			out = append(out, strings.TrimPrefix(l, "# "))
		}
	}
	return out
}

func TestInfoSections(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "SET", "k", "v")
	all := "Server Clients Memory Persistence Stats Replication CPU Modules Commandstats Errorstats Latencystats Cluster Keyspace"
	dflt := "Server Clients Memory Persistence Stats Replication CPU Modules Errorstats Cluster Keyspace"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, dflt},
		{[]string{"default"}, dflt},
		{[]string{"DEFAULT"}, dflt},
		{[]string{"all"}, all},
		{[]string{"everything"}, all},
		{[]string{"default", "commandstats"}, "Server Clients Memory Persistence Stats Replication CPU Modules Commandstats Errorstats Cluster Keyspace"},
		{[]string{"keyspace", "server", "server"}, "Server Keyspace"},
		{[]string{"latencystats"}, "Latencystats"},
		{[]string{"nosuch"}, ""},
	} {
		got := strings.Join(sectionTitles(infoText(t, ts, c, tc.args...)), " ")
		if got != tc.want {
			t.Errorf("INFO %v sections:\n got %s\nwant %s", tc.args, got, tc.want)
		}
	}
	// Format: "key:value\r\n" lines, one empty line between sections.
	text := infoText(t, ts, c, "everything")
	line := regexp.MustCompile(`^(# [A-Za-z]+|[a-z0-9_|]+:.*|)$`)
	for _, l := range strings.Split(strings.TrimSuffix(text, "\r\n"), "\r\n") {
		if !line.MatchString(l) {
			t.Errorf("bad INFO line %q", l)
		}
	}
	if strings.Contains(text, "\r\n\r\n\r\n") || strings.Contains(strings.ReplaceAll(text, "\r\n", ""), "\n") {
		t.Error("bad INFO line separators")
	}
}

// TestInfoFields checks every field Redis 7.0 reports (and the brief
// lists) is present, with the values that do not vary.
func TestInfoFields(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "SET", "k", "v")
	ts.do(c, "GET", "k")
	ts.do(c, "GET", "nokey")
	ts.do(c, "INCR", "k")
	ts.do(c, "CONFIG", "GET", "maxclients")
	text := infoText(t, ts, c, "everything")
	fields := map[string]string{}
	for _, l := range strings.Split(text, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			fields[k] = v
		}
	}
	want := map[string]string{
		// server
		"redis_version": "7.0.15", "vigil_version": Version, "redis_git_sha1": "00000000", "redis_git_dirty": "0",
		"redis_build_id": "", "redis_mode": "standalone", "os": "", "arch_bits": "64", "monotonic_clock": "",
		"multiplexing_api": "", "atomicvar_api": "", "gcc_version": "0.0.0", "process_id": "", "process_supervised": "no",
		"run_id": ts.s.runID, "tcp_port": "", "server_time_usec": "1700000000000000", "uptime_in_seconds": "",
		"uptime_in_days": "", "hz": "10", "configured_hz": "10", "lru_clock": "", "executable": "", "config_file": "",
		"io_threads_active": "0",
		// clients
		"connected_clients": "1", "cluster_connections": "0", "maxclients": "10000", "client_recent_max_input_buffer": "",
		"client_recent_max_output_buffer": "", "blocked_clients": "0", "tracking_clients": "0", "clients_in_timeout_table": "0",
		// memory
		"used_memory": "", "used_memory_human": "", "used_memory_rss": "", "used_memory_rss_human": "", "used_memory_peak": "",
		"used_memory_peak_human": "", "used_memory_peak_perc": "", "used_memory_overhead": "", "used_memory_startup": "",
		"used_memory_dataset": "", "used_memory_dataset_perc": "", "allocator_allocated": "", "allocator_active": "",
		"allocator_resident": "", "total_system_memory": "", "total_system_memory_human": "", "used_memory_lua": "",
		"used_memory_scripts": "", "maxmemory": "0", "maxmemory_human": "0B", "maxmemory_policy": "noeviction",
		"allocator_frag_ratio": "", "allocator_rss_ratio": "", "rss_overhead_ratio": "", "mem_fragmentation_ratio": "",
		"mem_fragmentation_bytes": "", "mem_not_counted_for_evict": "0", "mem_replication_backlog": "0",
		"mem_clients_slaves": "0", "mem_clients_normal": "", "mem_aof_buffer": "0", "mem_allocator": "go",
		"active_defrag_running": "0", "lazyfree_pending_objects": "0", "lazyfreed_objects": "0",
		// persistence
		"loading": "0", "async_loading": "0", "current_cow_peak": "0", "rdb_changes_since_last_save": "",
		"rdb_bgsave_in_progress": "0", "rdb_last_save_time": "", "rdb_last_bgsave_status": "ok", "rdb_last_bgsave_time_sec": "-1",
		"aof_enabled": "0", "aof_rewrite_in_progress": "0", "aof_last_bgrewrite_status": "ok", "aof_last_write_status": "ok",
		// stats
		"total_connections_received": "", "total_commands_processed": "5", "instantaneous_ops_per_sec": "0",
		"total_net_input_bytes": "", "total_net_output_bytes": "", "instantaneous_input_kbps": "0.00",
		"instantaneous_output_kbps": "0.00", "rejected_connections": "0", "sync_full": "0", "expired_keys": "0",
		"evicted_keys": "0", "keyspace_hits": "1", "keyspace_misses": "1", "pubsub_channels": "0", "pubsub_patterns": "0",
		"total_error_replies": "1", "total_reads_processed": "", "total_writes_processed": "",
		// replication
		"role": "master", "connected_slaves": "0", "master_failover_state": "no-failover", "master_replid": "",
		"master_replid2": strings.Repeat("0", 40), "master_repl_offset": "0", "second_repl_offset": "-1",
		"repl_backlog_active": "0", "repl_backlog_size": "1048576", "repl_backlog_first_byte_offset": "0",
		"repl_backlog_histlen": "0",
		// cpu
		"used_cpu_sys": "", "used_cpu_user": "", "used_cpu_sys_children": "", "used_cpu_user_children": "",
		"used_cpu_sys_main_thread": "", "used_cpu_user_main_thread": "",
		// errorstats, commandstats, cluster, keyspace
		"errorstat_ERR": "count=1",
		"cmdstat_get":   "", "cmdstat_set": "", "cmdstat_incr": "", "cmdstat_config|get": "",
		"latency_percentiles_usec_get": "",
		"cluster_enabled":              "0",
		"db0":                          "keys=1,expires=0,avg_ttl=0",
	}
	for k, v := range want {
		got, ok := fields[k]
		if !ok {
			t.Errorf("INFO field %s missing", k)
			continue
		}
		if v != "" && got != v {
			t.Errorf("INFO %s:%s, want %s", k, got, v)
		}
	}
	if !regexp.MustCompile(`^calls=2,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=0$`).MatchString(fields["cmdstat_get"]) {
		t.Errorf("cmdstat_get:%s", fields["cmdstat_get"])
	}
	if !regexp.MustCompile(`^calls=1,.*,rejected_calls=0,failed_calls=1$`).MatchString(fields["cmdstat_incr"]) {
		t.Errorf("cmdstat_incr:%s", fields["cmdstat_incr"])
	}
	if !regexp.MustCompile(`^p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$`).MatchString(fields["latency_percentiles_usec_get"]) {
		t.Errorf("latency_percentiles_usec_get:%s", fields["latency_percentiles_usec_get"])
	}
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(fields["master_replid"]) || fields["master_replid"] == ts.s.runID {
		t.Errorf("master_replid:%s", fields["master_replid"])
	}
	if !regexp.MustCompile(`^\d+\.\d{6}$`).MatchString(fields["used_cpu_user"]) {
		t.Errorf("used_cpu_user:%s", fields["used_cpu_user"])
	}
	if !regexp.MustCompile(`^\d+(\.\d\d[KMGTP]|B)$`).MatchString(fields["used_memory_human"]) {
		t.Errorf("used_memory_human:%s", fields["used_memory_human"])
	}
}

func TestBytesToHuman(t *testing.T) {
	for n, want := range map[uint64]string{0: "0B", 1023: "1023B", 1024: "1.00K", 916336: "894.86K",
		12169216: "11.61M", 25276514304: "23.54G", 1 << 40: "1.00T"} {
		if got := bytesToHuman(n); got != want {
			t.Errorf("bytesToHuman(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestInstantaneousOps: the ops/sec metric is the average of the last 16
// per-100ms rates, as trackInstantaneousMetric.
func TestInstantaneousOps(t *testing.T) {
	var m instMetric
	m.track(1000, 0)
	for i := 1; i <= 16; i++ {
		m.track(int64(1000+100*i), int64(50*i)) // 50 ops per 100 ms
	}
	if got := m.value(); got != 500 {
		t.Fatalf("ops/sec = %d, want 500", got)
	}
	m.track(2800, 850) // 50 ops in 200 ms: a sample of 250
	if got, want := m.value(), int64(15*500+250)/16; got != want {
		t.Fatalf("ops/sec = %d, want %d", got, want)
	}

	ts := newTestServer(t)
	c := ts.client()
	ts.s.mu.Lock()
	ts.s.setNow()
	ts.s.adminCron()
	ts.s.mu.Unlock()
	for i := 0; i < 30; i++ {
		ts.do(c, "PING")
	}
	ts.clk.Advance(100 * time.Millisecond)
	ts.s.mu.Lock()
	ts.s.setNow()
	ts.s.adminCron()
	ts.s.mu.Unlock()
	if got, want := ts.s.adm.metrics[metricCommands].value(), int64(300/16); got != want {
		t.Fatalf("instantaneous_ops_per_sec = %d, want %d", got, want)
	}
}
