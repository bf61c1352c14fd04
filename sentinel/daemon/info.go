package daemon

import (
	"github.com/vigil-kv/vigil/internal/redistext"

	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vigil-kv/vigil/configs"
)

// RedisVersion is the Redis version the sentinel reports.
const RedisVersion = configs.RedisVersion

func timeNow() time.Time { return time.Now() }

var processRunID = func() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}()

// infoSections are the sections of INFO in sentinel mode, in the order
// genRedisInfoString writes them (sentinelInfoCommand lists server,
// clients, cpu, stats and sentinel, but the output follows server.c's order:
// stats before cpu).
var infoSections = []string{"server", "clients", "stats", "cpu", "sentinel"}

// Instantaneous metrics (server.h STATS_METRIC_*).
const (
	metricCommand = iota
	metricNetInput
	metricNetOutput
	metricCount

	// metricSamples is STATS_METRIC_SAMPLES.
	metricSamples = 16
)

// serverStats holds the figures of INFO's Stats section that the
// connection loop counts (server.stat_*), and the instantaneous metrics
// sampled on the event loop.
type serverStats struct {
	netIn  atomic.Int64 // stat_net_input_bytes: bytes read from clients
	netOut atomic.Int64 // stat_net_output_bytes: bytes written to clients
	reads  atomic.Int64 // stat_total_reads_processed
	writes atomic.Int64 // stat_total_writes_processed
	errors atomic.Int64 // stat_total_error_replies

	mu   sync.Mutex // guards inst
	inst [metricCount]instMetric
}

// instMetric is one of server.inst_metric: the last metricSamples
// per-second rates.
type instMetric struct {
	lastTime  int64 // ms
	lastCount int64
	samples   [metricSamples]int64
	idx       int
}

// start is resetServerStats's part for the metrics: the first sample
// measures from now (unix ms), the process start.
func (s *serverStats) start(now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.inst {
		s.inst[i].lastTime = now
	}
}

// sample is trackInstantaneousMetric for every metric at now (unix ms).
// Redis runs it with run_with_period(100) in serverCron, which in sentinel
// mode (hz 10..19) means every cron run: the daemon calls it every tick.
func (s *serverStats) sample(now int64, commands int64) {
	cur := [metricCount]int64{commands, s.netIn.Load(), s.netOut.Load()}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.inst {
		m := &s.inst[i]
		t := now - m.lastTime
		var rate int64
		if t > 0 {
			rate = (cur[i] - m.lastCount) * 1000 / t
		}
		m.samples[m.idx] = rate
		m.idx = (m.idx + 1) % metricSamples
		m.lastTime = now
		m.lastCount = cur[i]
	}
}

// instantaneous is getInstantaneousMetric: the mean of the samples.
func (s *serverStats) instantaneous(metric int) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum int64
	for _, v := range s.inst[metric].samples {
		sum += v
	}
	return sum / metricSamples
}

// countingConn counts what a client connection reads and writes into the
// daemon's stats (stat_net_input_bytes, stat_total_reads_processed...).
type countingConn struct {
	net.Conn
	st *serverStats
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.st.netIn.Add(int64(n))
		c.st.reads.Add(1)
	}
	return n, err
}

// hz is server.hz: sentinelTimer re-randomises it at every run (the core's
// TickDelay), before the first run it is the configured hz.
func (d *Daemon) hz() int {
	if v := d.curHz.Load(); v > 0 {
		return int(v)
	}
	return d.st.Server.Hz
}

// cmdInfo is sentinelInfoCommand: the sections server, clients, stats,
// cpu and sentinel (genRedisInfoString's order, whatever order they are
// asked in); "default", "all" and "everything" give all of them, other
// section names nothing.
func cmdInfo(c *client, argv [][]byte) {
	c.w.BulkString(c.d.infoText(strs(argv[1:])))
}

// infoText is INFO's text for the sections asked (none: the default).
func (d *Daemon) infoText(sections []string) string {
	want := map[string]bool{}
	if len(sections) == 0 {
		for _, s := range infoSections {
			want[s] = true
		}
	}
	for _, arg := range sections {
		switch a := strings.ToLower(arg); a {
		case "default", "all", "everything":
			for _, s := range infoSections {
				want[s] = true
			}
		default:
			want[a] = true
		}
	}
	var parts []string
	now := time.Now()
	if want["server"] {
		exe, _ := os.Executable()
		port := d.st.Server.Port
		osName, buildID := redistext.HostInfo()
		// server.unixtime - server.stat_starttime: whole unix seconds.
		uptime := now.Unix() - d.started.Unix()
		parts = append(parts, fmt.Sprintf("# Server\r\n"+
			"redis_version:%s\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:%s\r\n"+
			"redis_mode:sentinel\r\nos:%s\r\narch_bits:64\r\nmonotonic_clock:POSIX clock_gettime\r\n"+
			"multiplexing_api:%s\r\natomicvar_api:c11-builtin\r\ngcc_version:0.0.0\r\n"+
			"process_id:%d\r\nprocess_supervised:no\r\nrun_id:%s\r\ntcp_port:%d\r\n"+
			"server_time_usec:%d\r\nuptime_in_seconds:%d\r\nuptime_in_days:%d\r\nhz:%d\r\nconfigured_hz:%d\r\n"+
			"lru_clock:%d\r\nexecutable:%s\r\nconfig_file:%s\r\nio_threads_active:0\r\n",
			RedisVersion, buildID, osName, redistext.MultiplexingAPI(), os.Getpid(), processRunID, port,
			now.UnixMicro(), uptime, uptime/86400, d.hz(), d.st.Server.Hz,
			now.Unix()&((1<<24)-1), exe, d.st.File))
	}
	if want["clients"] {
		d.clientsMu.Lock()
		n := len(d.clients)
		d.clientsMu.Unlock()
		parts = append(parts, fmt.Sprintf("# Clients\r\nconnected_clients:%d\r\ncluster_connections:0\r\n"+
			"maxclients:%d\r\nclient_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\n"+
			"blocked_clients:0\r\ntracking_clients:%d\r\nclients_in_timeout_table:0\r\n", n, d.st.Server.MaxClients, d.trackingClients.Load()))
	}
	if want["stats"] {
		chans, pats := d.hub.counts()
		st := &d.stats
		kbps := func(m int) string { return strconv.FormatFloat(float64(st.instantaneous(m))/1024, 'f', 2, 64) }
		parts = append(parts, fmt.Sprintf("# Stats\r\ntotal_connections_received:%d\r\n"+
			"total_commands_processed:%d\r\ninstantaneous_ops_per_sec:%d\r\ntotal_net_input_bytes:%d\r\n"+
			"total_net_output_bytes:%d\r\ntotal_net_repl_input_bytes:0\r\ntotal_net_repl_output_bytes:0\r\n"+
			"instantaneous_input_kbps:%s\r\ninstantaneous_output_kbps:%s\r\n"+
			"instantaneous_input_repl_kbps:0.00\r\ninstantaneous_output_repl_kbps:0.00\r\n"+
			"rejected_connections:%d\r\nsync_full:0\r\nsync_partial_ok:0\r\nsync_partial_err:0\r\n"+
			"expired_keys:0\r\nexpired_stale_perc:0.00\r\nexpired_time_cap_reached_count:0\r\n"+
			"expire_cycle_cpu_milliseconds:0\r\nevicted_keys:0\r\nevicted_clients:0\r\n"+
			"total_eviction_exceeded_time:0\r\ncurrent_eviction_exceeded_time:0\r\nkeyspace_hits:0\r\n"+
			"keyspace_misses:0\r\npubsub_channels:%d\r\npubsub_patterns:%d\r\npubsubshard_channels:0\r\n"+
			"latest_fork_usec:0\r\ntotal_forks:0\r\nmigrate_cached_sockets:0\r\nslave_expires_tracked_keys:0\r\n"+
			"active_defrag_hits:0\r\nactive_defrag_misses:0\r\nactive_defrag_key_hits:0\r\n"+
			"active_defrag_key_misses:0\r\ntotal_active_defrag_time:0\r\ncurrent_active_defrag_time:0\r\n"+
			"tracking_total_keys:0\r\ntracking_total_items:0\r\ntracking_total_prefixes:0\r\n"+
			"unexpected_error_replies:0\r\ntotal_error_replies:%d\r\ndump_payload_sanitizations:0\r\n"+
			"total_reads_processed:%d\r\ntotal_writes_processed:%d\r\nio_threaded_reads_processed:0\r\n"+
			"io_threaded_writes_processed:0\r\nreply_buffer_shrinks:0\r\nreply_buffer_expands:0\r\n",
			d.totalConns.Load(), d.totalCmds.Load(), st.instantaneous(metricCommand),
			st.netIn.Load(), st.netOut.Load(), kbps(metricNetInput), kbps(metricNetOutput),
			d.rejected.Load(), chans, pats, st.errors.Load(), st.reads.Load(), st.writes.Load()))
	}
	if want["cpu"] {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		var ch syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ch)
		tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
		parts = append(parts, fmt.Sprintf("# CPU\r\nused_cpu_sys:%.6f\r\nused_cpu_user:%.6f\r\n"+
			"used_cpu_sys_children:%.6f\r\nused_cpu_user_children:%.6f\r\n"+
			"used_cpu_sys_main_thread:%.6f\r\nused_cpu_user_main_thread:%.6f\r\n",
			tv(ru.Stime), tv(ru.Utime), tv(ch.Stime), tv(ch.Utime), tv(ru.Stime), tv(ru.Utime)))
	}
	if want["sentinel"] {
		var s string
		d.call(func() {
			running, queued := d.scripts.counts()
			s = d.core.InfoSection(nowMs(), running, queued)
		})
		parts = append(parts, s)
	}
	return strings.Join(parts, "\r\n")
}
