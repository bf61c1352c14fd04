package metrics

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// The series redis_exporter derives from INFO, with its names, labels and
// types. Field -> series name (without the redis_ prefix).
//
// infoGauges and infoCounters follow redis_exporter's exporter/exporter.go
// (metricMapGauges and metricMapCounters), restricted to the fields Redis
// 7.0's INFO has. Note that redis_exporter types sync_full,
// sync_partial_ok/err (replica_resyncs_full,
// replica_partial_resync_accepted/denied) and rdb_saves as gauges: kept so.
var infoGauges = map[string]string{
	// # Server
	"uptime_in_seconds": "uptime_in_seconds",
	"process_id":        "process_id",
	"io_threads_active": "io_threads_active",

	// # Clients
	"connected_clients":               "connected_clients",
	"blocked_clients":                 "blocked_clients",
	"maxclients":                      "max_clients",
	"tracking_clients":                "tracking_clients",
	"clients_in_timeout_table":        "clients_in_timeout_table",
	"client_recent_max_output_buffer": "client_recent_max_output_buffer_bytes",
	"client_recent_max_input_buffer":  "client_recent_max_input_buffer_bytes",

	// # Memory
	"allocator_active":              "allocator_active_bytes",
	"allocator_allocated":           "allocator_allocated_bytes",
	"allocator_resident":            "allocator_resident_bytes",
	"allocator_frag_ratio":          "allocator_frag_ratio",
	"allocator_frag_bytes":          "allocator_frag_bytes",
	"allocator_rss_ratio":           "allocator_rss_ratio",
	"allocator_rss_bytes":           "allocator_rss_bytes",
	"used_memory":                   "memory_used_bytes",
	"used_memory_rss":               "memory_used_rss_bytes",
	"used_memory_peak":              "memory_used_peak_bytes",
	"used_memory_lua":               "memory_used_lua_bytes",
	"used_memory_vm_eval":           "memory_used_vm_eval_bytes",
	"used_memory_scripts_eval":      "memory_used_scripts_eval_bytes",
	"used_memory_overhead":          "memory_used_overhead_bytes",
	"used_memory_startup":           "memory_used_startup_bytes",
	"used_memory_dataset":           "memory_used_dataset_bytes",
	"number_of_cached_scripts":      "number_of_cached_scripts",
	"number_of_functions":           "number_of_functions",
	"used_memory_vm_functions":      "memory_used_vm_functions_bytes",
	"used_memory_scripts":           "memory_used_scripts_bytes",
	"used_memory_functions":         "memory_used_functions_bytes",
	"used_memory_vm_total":          "memory_used_vm_total",
	"maxmemory":                     "memory_max_bytes",
	"mem_fragmentation_ratio":       "mem_fragmentation_ratio",
	"mem_fragmentation_bytes":       "mem_fragmentation_bytes",
	"mem_clients_slaves":            "mem_clients_slaves",
	"mem_clients_normal":            "mem_clients_normal",
	"mem_cluster_links":             "mem_cluster_links_bytes",
	"mem_aof_buffer":                "mem_aof_buffer_bytes",
	"mem_replication_backlog":       "mem_replication_backlog_bytes",
	"expired_stale_perc":            "expired_stale_percentage",
	"mem_not_counted_for_evict":     "mem_not_counted_for_eviction_bytes",
	"mem_total_replication_buffers": "mem_total_replication_buffers_bytes",
	"lazyfree_pending_objects":      "lazyfree_pending_objects",
	"lazyfreed_objects":             "lazyfreed_objects",
	"active_defrag_running":         "active_defrag_running",
	"migrate_cached_sockets":        "migrate_cached_sockets_total",
	"active_defrag_hits":            "defrag_hits",
	"active_defrag_misses":          "defrag_misses",
	"active_defrag_key_hits":        "defrag_key_hits",
	"active_defrag_key_misses":      "defrag_key_misses",

	// # Persistence
	"loading":                      "loading_dump_file",
	"async_loading":                "async_loading",
	"rdb_changes_since_last_save":  "rdb_changes_since_last_save",
	"rdb_bgsave_in_progress":       "rdb_bgsave_in_progress",
	"rdb_last_save_time":           "rdb_last_save_timestamp_seconds",
	"rdb_last_bgsave_status":       "rdb_last_bgsave_status",
	"rdb_last_bgsave_time_sec":     "rdb_last_bgsave_duration_sec",
	"rdb_current_bgsave_time_sec":  "rdb_current_bgsave_duration_sec",
	"rdb_saves":                    "rdb_saves_total",
	"rdb_last_cow_size":            "rdb_last_cow_size_bytes",
	"rdb_last_load_keys_expired":   "rdb_last_load_expired_keys",
	"rdb_last_load_keys_loaded":    "rdb_last_load_loaded_keys",
	"aof_enabled":                  "aof_enabled",
	"aof_rewrite_in_progress":      "aof_rewrite_in_progress",
	"aof_rewrite_scheduled":        "aof_rewrite_scheduled",
	"aof_last_rewrite_time_sec":    "aof_last_rewrite_duration_sec",
	"aof_current_rewrite_time_sec": "aof_current_rewrite_duration_sec",
	"aof_last_cow_size":            "aof_last_cow_size_bytes",
	"aof_current_size":             "aof_current_size_bytes",
	"aof_base_size":                "aof_base_size_bytes",
	"aof_pending_rewrite":          "aof_pending_rewrite",
	"aof_buffer_length":            "aof_buffer_length",
	"aof_rewrite_buffer_length":    "aof_rewrite_buffer_length",
	"aof_pending_bio_fsync":        "aof_pending_bio_fsync",
	"aof_delayed_fsync":            "aof_delayed_fsync",
	"aof_last_bgrewrite_status":    "aof_last_bgrewrite_status",
	"aof_last_write_status":        "aof_last_write_status",
	"module_fork_in_progress":      "module_fork_in_progress",
	"module_fork_last_cow_size":    "module_fork_last_cow_size",

	// # Stats
	"current_eviction_exceeded_time": "current_eviction_exceeded_time_ms",
	"pubsub_channels":                "pubsub_channels",
	"pubsub_patterns":                "pubsub_patterns",
	"pubsubshard_channels":           "pubsubshard_channels",
	"latest_fork_usec":               "latest_fork_usec", // renamed latest_fork_seconds below, as metrics.go
	"tracking_total_keys":            "tracking_total_keys",
	"tracking_total_items":           "tracking_total_items",
	"tracking_total_prefixes":        "tracking_total_prefixes",

	// # Replication
	"connected_slaves":               "connected_slaves",
	"repl_backlog_size":              "replication_backlog_bytes",
	"repl_backlog_active":            "repl_backlog_is_active",
	"repl_backlog_first_byte_offset": "repl_backlog_first_byte_offset",
	"repl_backlog_histlen":           "repl_backlog_history_bytes",
	"master_repl_offset":             "master_repl_offset",
	"second_repl_offset":             "second_repl_offset",
	"slave_expires_tracked_keys":     "slave_expires_tracked_keys",
	"slave_priority":                 "slave_priority",
	"sync_full":                      "replica_resyncs_full",
	"sync_partial_ok":                "replica_partial_resync_accepted",
	"sync_partial_err":               "replica_partial_resync_denied",
}

// infoCounters: exporter/exporter.go's metricMapCounters.
var infoCounters = map[string]string{
	"total_connections_received":     "connections_received_total",
	"total_commands_processed":       "commands_processed_total",
	"rejected_connections":           "rejected_connections_total",
	"total_net_input_bytes":          "net_input_bytes_total",
	"total_net_output_bytes":         "net_output_bytes_total",
	"total_net_repl_input_bytes":     "net_repl_input_bytes_total",
	"total_net_repl_output_bytes":    "net_repl_output_bytes_total",
	"expired_keys":                   "expired_keys_total",
	"expired_time_cap_reached_count": "expired_time_cap_reached_total",
	"expire_cycle_cpu_milliseconds":  "expire_cycle_cpu_time_ms_total",
	"evicted_keys":                   "evicted_keys_total",
	"evicted_clients":                "evicted_clients_total",
	"total_eviction_exceeded_time":   "eviction_exceeded_time_ms_total",
	"keyspace_hits":                  "keyspace_hits_total",
	"keyspace_misses":                "keyspace_misses_total",
	"used_cpu_sys":                   "cpu_sys_seconds_total",
	"used_cpu_user":                  "cpu_user_seconds_total",
	"used_cpu_sys_children":          "cpu_sys_children_seconds_total",
	"used_cpu_user_children":         "cpu_user_children_seconds_total",
	"used_cpu_sys_main_thread":       "cpu_sys_main_thread_seconds_total",
	"used_cpu_user_main_thread":      "cpu_user_main_thread_seconds_total",
	"unexpected_error_replies":       "unexpected_error_replies",
	"total_error_replies":            "total_error_replies",
	"dump_payload_sanitizations":     "dump_payload_sanitizations",
	"total_reads_processed":          "total_reads_processed",
	"total_writes_processed":         "total_writes_processed",
	"io_threaded_reads_processed":    "io_threaded_reads_processed",
	"io_threaded_writes_processed":   "io_threaded_writes_processed",
	"reply_buffer_shrinks":           "reply_buffer_shrinks_total",
	"reply_buffer_expands":           "reply_buffer_expands_total",
}

const ns = "redis_"

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// Labelled series, with the labels redis_exporter gives them
// (exporter/exporter.go's metricDescriptions; the source file of the value
// is named at each).
var (
	// exporter/info.go (extractInfoMetrics), with master_replid as there.
	descInstanceInfo = desc(ns+"instance_info", "Information about the Redis instance",
		"role", "redis_version", "redis_build_id", "redis_mode", "os", "maxmemory_policy", "tcp_port", "run_id", "process_id", "master_replid")
	descSlaveInfo = desc(ns+"slave_info", "Information about the Redis slave", "master_host", "master_port", "read_only")
	descUp        = desc(ns+"up", "Information about the Redis instance")
	// exporter/info.go (handleMetricsServer).
	descStartTime = desc(ns+"start_time_seconds", "Start time of the Redis instance since unix epoch in seconds.")
	// exporter/info.go (handleMetricsReplication).
	descMasterLinkUp      = desc(ns+"master_link_up", "Master link status on Redis slave", "master_host", "master_port")
	descMasterLastIO      = desc(ns+"master_last_io_seconds_ago", "Master last io seconds ago", "master_host", "master_port")
	descMasterSync        = desc(ns+"master_sync_in_progress", "Master sync in progress", "master_host", "master_port")
	descSlaveReplOffset   = desc(ns+"slave_repl_offset", "Slave replication offset", "master_host", "master_port")
	descSlaveOffsetBytes  = desc(ns+"connected_slave_offset_bytes", "Offset of connected slave", "slave_ip", "slave_port", "slave_state")
	descSlaveLagSeconds   = desc(ns+"connected_slave_lag_seconds", "Lag of connected slave", "slave_ip", "slave_port", "slave_state")
	descCommandsTotal     = desc(ns+"commands_total", "Total number of calls per command", "cmd")
	descCommandsDuration  = desc(ns+"commands_duration_seconds_total", "Total amount of time in seconds spent per command", "cmd")
	descCommandsRejected  = desc(ns+"commands_rejected_calls_total", "Total number of errors within command execution per command", "cmd")
	descCommandsFailed    = desc(ns+"commands_failed_calls_total", "Total number of errors prior command execution per command", "cmd")
	descLatencyPercentile = desc(ns+"latency_percentiles_usec", "A summary of latency percentile distribution per command", "cmd")
	descErrorsTotal       = desc(ns+"errors_total", "Total number of errors per error type", "err")
	// exporter/info.go (dbKeyspaceMetricDefinitions).
	descDBKeys         = desc(ns+"db_keys", "Total number of keys by DB", "db")
	descDBKeysExpiring = desc(ns+"db_keys_expiring", "Total number of expiring keys by DB", "db")
	descDBAvgTTL       = desc(ns+"db_avg_ttl_seconds", "Avg TTL in seconds", "db")
	// exporter/sentinels.go (handleMetricsSentinel), from INFO sentinel.
	descSentinelMasterStatus    = desc(ns+"sentinel_master_status", "Master status on Sentinel", "master_name", "master_address", "master_status")
	descSentinelMasterSlaves    = desc(ns+"sentinel_master_slaves", "The number of slaves of the master", "master_name", "master_address")
	descSentinelMasterSentinels = desc(ns+"sentinel_master_sentinels", "The number of sentinels monitoring this master", "master_name", "master_address")
)

// sentinelInfoGauges are exporter/sentinels.go's handleMetricsSentinel
// fields: INFO sentinel's globals, unlabelled gauges.
var sentinelInfoGauges = map[string]string{
	"sentinel_masters":                "The number of masters this sentinel is watching",
	"sentinel_tilt":                   "Sentinel is in TILT mode",
	"sentinel_running_scripts":        "Number of scripts in execution right now",
	"sentinel_scripts_queue_length":   "Queue of user scripts to execute",
	"sentinel_simulate_failure_flags": "Failures simulations",
}

// plainDescs are the unlabelled series, by series name (prefix included).
var plainDescs = func() map[string]*prometheus.Desc {
	m := map[string]*prometheus.Desc{}
	for field, name := range infoGauges {
		m[ns+name] = desc(ns+name, "INFO "+field)
	}
	for field, name := range infoCounters {
		m[ns+name] = desc(ns+name, "INFO "+field)
	}
	m[ns+"latest_fork_seconds"] = desc(ns+"latest_fork_seconds", "INFO latest_fork_usec, in seconds")
	for _, f := range []string{"hz", "configured_hz"} {
		m[ns+f] = desc(ns+f, "INFO "+f)
	}
	for f, help := range sentinelInfoGauges {
		m[ns+f] = desc(ns+f, help)
	}
	return m
}()

// infoValue parses an INFO value as redis_exporter's
// parseAndRegisterConstMetric (exporter/metrics.go): ok/true are 1,
// err/fail/false 0, anything else a number.
func infoValue(v string) (float64, bool) {
	switch v {
	case "ok", "true":
		return 1, true
	case "err", "fail", "false":
		return 0, true
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// kvList splits "a=1,b=2" into its pairs.
func kvList(s string) map[string]string {
	m := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(part, "="); ok {
			m[k] = v
		}
	}
	return m
}

// infoFields is INFO text as field -> value, with the section each field
// came from.
type infoLine struct{ section, key, value string }

func parseInfo(info string) []infoLine {
	var out []infoLine
	section := ""
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "# ") {
			section = line[2:]
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || len(line) < 2 {
			continue
		}
		out = append(out, infoLine{section, k, v})
	}
	return out
}

// cmdTotals is what commandstats says of one command: calls and usec,
// kept for the latency series.
type cmdTotals struct {
	calls uint64
	usec  float64
}

// emitInfo sends the series redis_exporter derives from INFO (info.go's
// extractInfoMetrics) and returns commandstats' totals per command, for the
// histograms. now is the unix time in seconds (start_time_seconds).
func emitInfo(ch chan<- prometheus.Metric, info string, now float64) map[string]cmdTotals {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	kv := map[string]string{}
	cmds := map[string]cmdTotals{}
	percentiles := map[string]map[float64]float64{}
	masterHost, masterPort := "", ""
	for _, l := range parseInfo(info) {
		k, v := l.key, l.value
		kv[k] = v
		switch k {
		case "master_host":
			masterHost = v
		case "master_port":
			masterPort = v
		}
		switch l.section {
		case "Server":
			switch k {
			case "uptime_in_seconds":
				if up, err := strconv.ParseFloat(v, 64); err == nil {
					gauge(descStartTime, now-up)
				}
			case "hz", "configured_hz":
				if f, err := strconv.ParseInt(v, 10, 64); err == nil {
					gauge(plainDescs[ns+k], float64(f))
				}
			}
		case "Replication":
			switch {
			case k == "master_link_status":
				up := 0.0
				if v == "up" {
					up = 1
				}
				gauge(descMasterLinkUp, up, masterHost, masterPort)
				continue
			case k == "master_last_io_seconds_ago", k == "master_sync_in_progress", k == "slave_repl_offset":
				n, _ := strconv.Atoi(v) // as info.go: a value that does not parse is 0
				d := map[string]*prometheus.Desc{"master_last_io_seconds_ago": descMasterLastIO,
					"master_sync_in_progress": descMasterSync, "slave_repl_offset": descSlaveReplOffset}[k]
				gauge(d, float64(n), masterHost, masterPort)
				continue
			case isSlaveLine(k):
				f := kvList(v)
				off, err := strconv.ParseFloat(f["offset"], 64)
				if err != nil {
					continue
				}
				gauge(descSlaveOffsetBytes, off, f["ip"], f["port"], f["state"])
				if lag, err := strconv.ParseFloat(f["lag"], 64); err == nil {
					gauge(descSlaveLagSeconds, lag, f["ip"], f["port"], f["state"])
				}
				continue
			}
		case "Commandstats":
			name, ok := strings.CutPrefix(k, "cmdstat_")
			f := kvList(v)
			calls, err1 := strconv.ParseFloat(f["calls"], 64)
			usec, err2 := strconv.ParseFloat(f["usec"], 64)
			if !ok || err1 != nil || err2 != nil {
				continue
			}
			counter(descCommandsTotal, calls, name)
			counter(descCommandsDuration, usec/1e6, name)
			if r, err := strconv.ParseFloat(f["rejected_calls"], 64); err == nil {
				counter(descCommandsRejected, r, name)
			}
			if fl, err := strconv.ParseFloat(f["failed_calls"], 64); err == nil {
				counter(descCommandsFailed, fl, name)
			}
			cmds[name] = cmdTotals{uint64(calls), usec}
			continue
		case "Latencystats":
			name, ok := strings.CutPrefix(k, "latency_percentiles_usec_")
			if !ok {
				continue
			}
			m := map[float64]float64{}
			for pk, pv := range kvList(v) {
				p, err1 := strconv.ParseFloat(strings.TrimPrefix(pk, "p"), 64)
				val, err2 := strconv.ParseFloat(pv, 64)
				if err1 == nil && err2 == nil {
					m[p] = val
				}
			}
			percentiles[name] = m
			continue
		case "Errorstats":
			if code, ok := strings.CutPrefix(k, "errorstat_"); ok {
				if n, err := strconv.ParseFloat(kvList(v)["count"], 64); err == nil {
					counter(descErrorsTotal, n, code)
				}
			}
			continue
		case "Keyspace":
			if strings.HasPrefix(k, "db") {
				f := kvList(v)
				keys, err1 := strconv.ParseFloat(f["keys"], 64)
				exp, err2 := strconv.ParseFloat(f["expires"], 64)
				if err1 != nil || err2 != nil {
					continue
				}
				gauge(descDBKeys, keys, k)
				gauge(descDBKeysExpiring, exp, k)
				if ttl, err := strconv.ParseFloat(f["avg_ttl"], 64); err == nil {
					gauge(descDBAvgTTL, ttl/1000, k)
				}
				continue
			}
		case "Sentinel":
			if _, ok := sentinelInfoGauges[k]; ok {
				n, _ := strconv.Atoi(v)
				gauge(plainDescs[ns+k], float64(n))
				continue
			}
			if isMasterLine(k) {
				f := kvList(v)
				slaves, err1 := strconv.ParseFloat(f["slaves"], 64)
				sentinels, err2 := strconv.ParseFloat(f["sentinels"], 64)
				if err1 != nil || err2 != nil {
					continue
				}
				ok := 0.0
				if f["status"] == "ok" {
					ok = 1
				}
				gauge(descSentinelMasterStatus, ok, f["name"], f["address"], f["status"])
				gauge(descSentinelMasterSlaves, slaves, f["name"], f["address"])
				gauge(descSentinelMasterSentinels, sentinels, f["name"], f["address"])
				continue
			}
		}
		name, isGauge := infoGauges[k]
		typ := prometheus.GaugeValue
		if !isGauge {
			var isCounter bool
			if name, isCounter = infoCounters[k]; !isCounter {
				continue
			}
			typ = prometheus.CounterValue
		}
		val, ok := infoValue(v)
		if !ok {
			continue
		}
		if name == "latest_fork_usec" {
			name, val = "latest_fork_seconds", val/1e6
		}
		ch <- prometheus.MustNewConstMetric(plainDescs[ns+name], typ, val)
	}
	for name, m := range percentiles {
		if t, ok := cmds[name]; ok {
			ch <- prometheus.MustNewConstSummary(descLatencyPercentile, t.calls, t.usec, m, name)
		}
	}
	mode := kv["redis_mode"]
	if mode == "" {
		mode = kv["server_mode"]
	}
	gauge(descInstanceInfo, 1, kv["role"], kv["redis_version"], kv["redis_build_id"], mode, kv["os"],
		kv["maxmemory_policy"], kv["tcp_port"], kv["run_id"], kv["process_id"], kv["master_replid"])
	if kv["role"] == "slave" {
		gauge(descSlaveInfo, 1, kv["master_host"], kv["master_port"], kv["slave_read_only"])
	}
	gauge(descUp, 1)
	return cmds
}

// isSlaveLine matches INFO replication's "slave<N>" lines.
func isSlaveLine(k string) bool { return numbered(k, "slave") }

// isMasterLine matches INFO sentinel's "master<N>" lines.
func isMasterLine(k string) bool { return numbered(k, "master") }

func numbered(k, prefix string) bool {
	rest, ok := strings.CutPrefix(k, prefix)
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
