package deploy

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/configs"
)

// Kind says which binaries run the nodes.
type Kind string

const (
	// KindVigil runs vigil-server and vigil-sentinel as the hidden
	// `server` and `sentinel` subcommands of one binary (Spec.VigilExe,
	// os.Executable() by default): nothing but Go is needed.
	KindVigil Kind = "vigil"
	// KindRedis runs Debian's redis-server and redis-sentinel from PATH.
	KindRedis Kind = "redis"
)

// Spec describes a local deployment: one master, Replicas replicas and
// Sentinels sentinels on Host, servers on BasePort, BasePort+1, ... and
// sentinels on SentinelBasePort, SentinelBasePort+1, ...
type Spec struct {
	Kind Kind
	// SentinelKind runs the sentinels with other binaries than the servers
	// (`vigil drill --server redis`: redis-server under vigil-sentinel);
	// Kind by default.
	SentinelKind     Kind
	Dir              string // data directory; one subdirectory per node
	Host             string // default 127.0.0.1
	BasePort         int    // default 6379
	SentinelBasePort int    // default 26379
	Replicas         int    // default 2 (a negative value means none)
	Sentinels        int    // default 3 (a negative value means none)
	MasterName       string // default mymaster
	// Groups is the number of master groups (default 1): each has a
	// master and Replicas replicas, and every sentinel monitors them all.
	// Group 1 is MasterName on BasePort..BasePort+Replicas; group k (from
	// 2) is MasterName-k on the next Replicas+1 ports (GroupName,
	// GroupBasePort).
	Groups          int
	Quorum          int // default a majority of the sentinels
	DownAfter       time.Duration
	FailoverTimeout time.Duration

	// ServerDirectives and SentinelDirectives are extra config lines
	// ("maxmemory 100mb") that replace the template's line of the same
	// directive or are appended.
	ServerDirectives   []string
	SentinelDirectives []string

	// Templates holds master.conf, replica.conf and sentinel.conf;
	// configs.Examples by default.
	Templates fs.FS
	// VigilExe is the binary run with `server` / `sentinel` for KindVigil;
	// os.Executable() by default.
	VigilExe string
	// Proxy places a fault-injecting TCP proxy in front of each server
	// (Node.PeerAddr) and makes the server announce it
	// (replica-announce-ip/port; replicas and sentinels are pointed at the
	// master's proxy), so Deployment.Partition can cut a server off while it
	// runs. The proxies live in the process that called New until Stop.
	Proxy bool
	// Netns runs every node in a Linux network namespace of its own, with
	// its own IP (Node.Host, 10.A.B.x) on a bridge reached from this
	// process's namespace, so Deployment.Partition cuts with real packet
	// loss (nftables rules on the bridge). It needs root, ip and nft
	// (NetnsAvailable says why not); Host is ignored and Proxy must be
	// false. The namespaces, stale ones of crashed runs included, are
	// removed by New (stale) and Stop.
	Netns bool
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL;
	// default 10 s.
	StopTimeout time.Duration
}

// withDefaults fills the zero fields.
func (s Spec) withDefaults() Spec {
	if s.Kind == "" {
		s.Kind = KindVigil
	}
	if s.SentinelKind == "" {
		s.SentinelKind = s.Kind
	}
	if s.Dir == "" {
		s.Dir = "vigil-data"
	}
	if s.Host == "" {
		s.Host = "127.0.0.1"
	}
	if s.BasePort == 0 {
		s.BasePort = 6379
	}
	if s.SentinelBasePort == 0 {
		s.SentinelBasePort = 26379
	}
	switch {
	case s.Replicas == 0:
		s.Replicas = 2
	case s.Replicas < 0:
		s.Replicas = 0
	}
	switch {
	case s.Sentinels == 0:
		s.Sentinels = 3
	case s.Sentinels < 0:
		s.Sentinels = 0
	}
	if s.MasterName == "" {
		s.MasterName = "mymaster"
	}
	if s.Groups == 0 {
		s.Groups = 1
	}
	if s.Quorum == 0 {
		s.Quorum = s.Sentinels/2 + 1
	}
	if s.Templates == nil {
		if sub, err := fs.Sub(configs.Examples, "examples"); err == nil {
			s.Templates = sub
		}
	}
	if s.StopTimeout == 0 {
		s.StopTimeout = 10 * time.Second
	}
	return s
}

// validate reports the first problem of a defaulted spec.
func (s Spec) validate() error {
	for _, k := range []Kind{s.Kind, s.SentinelKind} {
		switch k {
		case KindVigil, KindRedis:
		default:
			return fmt.Errorf("unknown server kind %q: want vigil or redis", k)
		}
	}
	if s.Groups < 1 {
		return fmt.Errorf("groups %d: want at least 1", s.Groups)
	}
	last := s.lastServerPort()
	if s.BasePort < 1 || last > 65535 {
		return fmt.Errorf("base port %d: the servers need ports %d-%d", s.BasePort, s.BasePort, last)
	}
	if s.Sentinels > 0 && (s.SentinelBasePort < 1 || s.SentinelBasePort+s.Sentinels-1 > 65535) {
		return fmt.Errorf("sentinel base port %d: the sentinels need ports %d-%d", s.SentinelBasePort, s.SentinelBasePort, s.SentinelBasePort+s.Sentinels-1)
	}
	if lo, hi := s.BasePort, last; s.Sentinels > 0 && s.SentinelBasePort <= hi && lo <= s.SentinelBasePort+s.Sentinels-1 {
		return fmt.Errorf("server ports %d-%d overlap sentinel ports %d-%d", lo, hi, s.SentinelBasePort, s.SentinelBasePort+s.Sentinels-1)
	}
	if s.Sentinels > 0 && (s.Quorum < 1 || s.Quorum > s.Sentinels) {
		return fmt.Errorf("quorum %d: want 1 to %d (the number of sentinels)", s.Quorum, s.Sentinels)
	}
	if s.Netns && s.Proxy {
		return errors.New("Spec.Netns and Spec.Proxy are exclusive: pick one way to partition")
	}
	if strings.ContainsAny(s.MasterName, " \t\r\n\"'") || s.MasterName == "" {
		return fmt.Errorf("master name %q: want one word", s.MasterName)
	}
	return nil
}

// GroupName is the master name of group g (1-based): MasterName for the
// first, MasterName-g for the others ("mymaster", "mymaster-2", ...).
func (s Spec) GroupName(g int) string {
	if g <= 1 {
		return s.MasterName
	}
	return s.MasterName + "-" + strconv.Itoa(g)
}

// GroupNames are the master names of the groups, the first group first.
func (s Spec) GroupNames() []string {
	out := make([]string, max(s.Groups, 1))
	for i := range out {
		out[i] = s.GroupName(i + 1)
	}
	return out
}

// GroupBasePort is the port of group g's master (1-based); its replicas
// use the next ports.
func (s Spec) GroupBasePort(g int) int {
	return s.BasePort + (g-1)*(s.Replicas+1)
}

// lastServerPort is the port of the last replica of the last group.
func (s Spec) lastServerPort() int {
	return s.GroupBasePort(max(s.Groups, 1)) + s.Replicas
}

// Role is a node's role in the deployment as started (after a failover the
// servers' actual roles differ: ask Collect).
type Role string

const (
	RoleMaster   Role = "master"
	RoleReplica  Role = "replica"
	RoleSentinel Role = "sentinel"
)

// PortBusyError is returned by New when a port the deployment needs is taken.
type PortBusyError struct {
	Port int
	Node string // "server-6379", "sentinel-26379"
	Flag string // the vigil up flag that moves it: --base-port or --sentinel-base-port
	Err  error
}

func (e *PortBusyError) Error() string {
	return fmt.Sprintf("port %d (%s) is already in use: stop what listens there or choose other ports with %s (%v)",
		e.Port, e.Node, e.Flag, e.Err)
}

func (e *PortBusyError) Unwrap() error { return e.Err }

// checkPort reports whether host:port can be listened on now.
func checkPort(host string, port int) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return ln.Close()
}

// binaries returns the command prefix for a server and a sentinel.
func (s Spec) binaries() (server, sentinel []string, err error) {
	if s.SentinelKind != s.Kind {
		a := s
		a.SentinelKind = a.Kind
		a.Sentinels = -1 // the servers' binaries only: redis-server needs no redis-sentinel
		server, _, err := a.binaries()
		if err != nil {
			return nil, nil, err
		}
		b := s
		b.Kind = b.SentinelKind
		_, sentinel, err := b.binaries()
		if err != nil {
			return nil, nil, err
		}
		return server, sentinel, nil
	}
	switch s.Kind {
	case KindRedis:
		rs, err := exec.LookPath("redis-server")
		if err != nil {
			return nil, nil, errors.New("redis-server not found in PATH: install it with `apt-get install -y redis-server redis-tools` (or use --server vigil)")
		}
		var sentinel []string
		if s.Sentinels > 0 {
			rsent, err := exec.LookPath("redis-sentinel")
			if err != nil {
				return nil, nil, errors.New("redis-sentinel not found in PATH: install it with `apt-get install -y redis-sentinel` (or use --server vigil)")
			}
			sentinel = []string{rsent}
		}
		return []string{rs}, sentinel, nil
	default:
		exe := s.VigilExe
		if exe == "" {
			exe, err = os.Executable()
			if err != nil {
				return nil, nil, fmt.Errorf("finding the vigil binary: %w", err)
			}
		}
		return []string{exe, "server"}, []string{exe, "sentinel"}, nil
	}
}

// renderConfig returns the template text with each override replacing the
// template's line for the same directive (the first one; later duplicates
// are dropped) or appended when the template has none. Directives are keyed
// by their name, and `sentinel <sub> <master>` lines by their first three
// words, so "sentinel monitor mymaster ..." replaces the template's monitor
// line of that master.
func renderConfig(template string, overrides []string) string {
	keyed := map[string]string{}
	var order []string
	for _, o := range overrides {
		k := directiveKey(o)
		if k == "" {
			continue
		}
		if _, dup := keyed[k]; !dup {
			order = append(order, k)
		}
		keyed[k] = o
	}
	used := map[string]bool{}
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(template))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		k := directiveKey(line)
		if o, ok := keyed[k]; ok && k != "" {
			if !used[k] {
				b.WriteString(o)
				b.WriteString("\n")
				used[k] = true
			}
			continue
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	var appended []string
	for _, k := range order {
		if !used[k] {
			appended = append(appended, keyed[k])
		}
	}
	if len(appended) > 0 {
		b.WriteString("\n# Set by vigil up (internal/deploy).\n")
		for _, l := range appended {
			b.WriteString(l)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// directiveKey is the lowercase directive name of a config line ("" for
// comments and blank lines); sentinel lines about one master are keyed by
// "sentinel <sub> <master>".
func directiveKey(line string) string {
	f := strings.Fields(line)
	if len(f) == 0 || strings.HasPrefix(f[0], "#") {
		return ""
	}
	name := strings.ToLower(f[0])
	if name == "slaveof" {
		name = "replicaof"
	}
	if name == "sentinel" && len(f) >= 2 {
		sub := strings.ToLower(f[1])
		switch sub {
		case "monitor", "down-after-milliseconds", "failover-timeout", "parallel-syncs", "auth-pass", "auth-user",
			"notification-script", "client-reconfig-script", "master-reboot-down-after-period", "forget-after-milliseconds":
			if len(f) >= 3 {
				return name + " " + sub + " " + f[2]
			}
		}
		return name + " " + sub
	}
	return name
}

// quote writes s as a config argument, double-quoted when needed.
func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"'\\") {
		return s
	}
	return strconv.Quote(s)
}

// groupMaster is a group's name and master as started, for the sentinels'
// monitor lines.
type groupMaster struct {
	name   string
	master *Node
}

// nodeConfig is the configuration text of n: master is its group's master
// (servers); a sentinel monitors every group of masters.
func (s Spec) nodeConfig(n *Node, master *Node, masters []groupMaster) (string, error) {
	tmpl := map[Role]string{RoleMaster: "master.conf", RoleReplica: "replica.conf", RoleSentinel: "sentinel.conf"}[n.Role]
	text, err := fs.ReadFile(s.Templates, tmpl)
	if err != nil {
		return "", fmt.Errorf("config template: %w", err)
	}
	o := []string{
		"port " + strconv.Itoa(n.Port),
		"bind " + n.Host,
		"dir " + quote(n.Dir),
		"logfile " + quote(n.LogPath),
		"pidfile " + quote(n.PidPath),
		"daemonize no",
	}
	peerPort := func(m *Node) string {
		if m.PeerPort != 0 {
			return strconv.Itoa(m.PeerPort)
		}
		return strconv.Itoa(m.Port)
	}
	mport := peerPort(master)
	if n.netns != "" && n.Role != RoleSentinel {
		// Clients come from other addresses than loopback.
		o = append(o, "protected-mode no")
	}
	if n.PeerPort != 0 {
		o = append(o, "replica-announce-ip "+s.Host, "replica-announce-port "+strconv.Itoa(n.PeerPort))
	}
	if n.Role != RoleSentinel {
		// Before the caller's directives, which may override them.
		o = append(o, s.replTimeoutDirectives(tmplDownAfter(s.Templates, s.MasterName))...)
	}
	switch n.Role {
	case RoleReplica:
		o = append(o, "replicaof "+master.Host+" "+mport)
		o = append(o, s.ServerDirectives...)
	case RoleMaster:
		o = append(o, s.ServerDirectives...)
	case RoleSentinel:
		if len(masters) == 0 {
			masters = []groupMaster{{s.MasterName, master}}
		}
		for _, g := range masters {
			o = append(o, fmt.Sprintf("sentinel monitor %s %s %s %d", g.name, g.master.Host, peerPort(g.master), s.Quorum))
			if s.DownAfter > 0 {
				o = append(o, fmt.Sprintf("sentinel down-after-milliseconds %s %d", g.name, s.DownAfter.Milliseconds()))
			}
			if s.FailoverTimeout > 0 {
				o = append(o, fmt.Sprintf("sentinel failover-timeout %s %d", g.name, s.FailoverTimeout.Milliseconds()))
			}
		}
		o = append(o, s.SentinelDirectives...)
	}
	names := []string{s.MasterName}
	if len(masters) > 0 {
		names = names[:0]
		for _, g := range masters {
			names = append(names, g.name)
		}
	}
	text = []byte(renameMaster(string(text), names...))
	return renderConfig(string(text), o), nil
}

// renameMaster rewrites the template's per-master sentinel lines
// ("sentinel down-after-milliseconds mymaster 5000") for other master
// names, one copy of each line per name in order, so the template's values
// apply to every group.
func renameMaster(text string, names ...string) string {
	if len(names) == 1 && names[0] == "mymaster" {
		return text
	}
	lines := strings.Split(text, "\n")
	var out []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 3 && strings.EqualFold(f[0], "sentinel") && f[2] == "mymaster" {
			for _, name := range names {
				f[2] = name
				out = append(out, strings.Join(f, " "))
			}
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// nodeDir returns the node's directory under dir.
func nodeDir(dir string, role Role, port int) string {
	kind := "server"
	if role == RoleSentinel {
		kind = "sentinel"
	}
	return filepath.Join(dir, fmt.Sprintf("%s-%d", kind, port))
}

// replTimeoutDirectives are the data nodes' repl-timeout and
// repl-ping-replica-period, matched to the sentinels' down-after
// (Spec.DownAfter, else the sentinel template's, tmpl; none when neither
// is known): repl-timeout is down-after in whole seconds (at least 2) and
// the master pings its replicas every second. With Redis's defaults (60 s,
// ping every 10 s) a master that stops silently (SIGSTOP, a cut cable, a
// host down) keeps its replicas' links "up" for a minute after the
// sentinels found it down, and sync-ack mode's failover rule, which
// promotes only a replica whose link is down (its offset is final), waits
// for them (docs/safety.md, "Operator settings"). The same values go to
// every kind of server, so vigil-server and redis-server runs of the drill
// compare.
func (s Spec) replTimeoutDirectives(tmpl time.Duration) []string {
	da := s.DownAfter
	if da <= 0 {
		da = tmpl
	}
	if da <= 0 {
		return nil
	}
	secs := max(int(da/time.Second), 2)
	return []string{"repl-ping-replica-period 1", "repl-timeout " + strconv.Itoa(secs)}
}

// tmplDownAfter is the down-after-milliseconds the sentinel template sets
// for the master name (0 when it sets none or cannot be read).
func tmplDownAfter(tmpl fs.FS, name string) time.Duration {
	if tmpl == nil {
		return 0
	}
	b, err := fs.ReadFile(tmpl, "sentinel.conf")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(renameMaster(string(b), name), "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && strings.EqualFold(f[0], "sentinel") && strings.EqualFold(f[1], "down-after-milliseconds") && f[2] == name {
			if ms, err := strconv.Atoi(f[3]); err == nil && ms > 0 {
				return time.Duration(ms) * time.Millisecond
			}
		}
	}
	return 0
}
