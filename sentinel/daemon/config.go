package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/sentinel"
)

// DefaultPort is redis-sentinel's port (REDIS_SENTINEL_PORT).
const DefaultPort = 26379

// Startup errors, as redis-sentinel logs them before exiting with status 1.
var (
	// ErrNoConfigFile is main()'s refusal to run without a file.
	ErrNoConfigFile = errors.New("Sentinel needs config file on disk to save state. Exiting...")
)

// Settings is sentinel.conf as loaded: the redis.conf directives the daemon
// acts on (through the full parsed server configuration) and the sentinel
// state handed to the core.
type Settings struct {
	// File is the absolute path of sentinel.conf.
	File string
	// Server holds every redis.conf directive of the file and of the
	// command line (port, bind, dir, logfile, loglevel, pidfile,
	// requirepass, protected-mode...), with sentinel's defaults: port
	// 26379 and protected-mode no unless the file says otherwise.
	Server *configs.Config
	// Sentinel is the state of the "sentinel ..." lines.
	Sentinel sentinel.Config

	// Notes are what the loader wants logged at startup (a command-line
	// monitor line left out, see LoadConfig).
	Notes []string

	// userLines gives the ACL users as ACL LIST shows them, for the
	// rewrite (set by the daemon; nil: the users of the file).
	userLines func() []string
}

type sentinelLine struct {
	no   int
	text string
	args []string // after "sentinel"
}

// LoadConfig reads sentinel.conf and the `--directive value` arguments that
// follow it, as redis-sentinel does: server directives are applied in order
// (the first bad one is fatal), then the sentinel lines in sentinel.c's
// three passes (global options, monitor lines, the rest), so a per-master
// line may come before its monitor line. Errors are *configs.FileError or
// *configs.ConfigError, printed as Redis prints them.
func LoadConfig(path string, args []string) (*Settings, error) {
	if path == "" {
		return nil, ErrNoConfigFile
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, &configs.FileError{Path: abs, Err: err}
	}
	text := string(data)
	fileLines := strings.Count(text, "\n") + 1 // later lines come from args
	if len(args) > 0 {
		text += "\n" + configs.ArgsToConfig(args)
	}
	// The redis.conf loader queues the sentinel lines (included files'
	// too) as queueSentinelConfig does; they are applied after the rest.
	var slines []sentinelLine
	hasPort, hasProtected := false, false
	for _, raw := range strings.Split(text, "\n") {
		if a, err := redisutil.SplitArgs(strings.Trim(raw, " \t\r\n")); err == nil && len(a) > 0 {
			switch strings.ToLower(a[0]) {
			case "port":
				hasPort = true
			case "protected-mode":
				hasProtected = true
			}
		}
	}
	cfg, err := configs.Load(configs.LoadOptions{ConfigFile: "-", Stdin: strings.NewReader(text),
		KnownCommand: knownCommand,
		Sentinel: func(no int, line string, args []string) {
			slines = append(slines, sentinelLine{no: no, text: line, args: args})
		}})
	if err != nil {
		var ce *configs.ConfigError
		if errors.As(err, &ce) {
			ce.File = "" // redis-sentinel names no file in the message
		}
		return nil, err
	}
	cfg.File = abs
	if !hasPort {
		cfg.Port = DefaultPort
	}
	if !hasProtected {
		cfg.ProtectedMode = false
	}
	if cfg.Dir == "" {
		if wd, err := os.Getwd(); err == nil {
			cfg.Dir = wd
		}
	}
	if err := checkUserLines(text, cfg); err != nil {
		return nil, err
	}
	// sentinel.c handles its queued lines after the whole file was read
	// (loadSentinelConfigFromQueue, called by main() after
	// loadServerConfig), so after every "dir" line has chdir()ed: a
	// relative script path is checked from the final dir, wherever the
	// "dir" line stands. The caller (cmd/vigil-sentinel) chdirs to
	// Server.Dir before anything else resolves a relative path (logfile,
	// pidfile, scripts run later).
	slines, notes := dropSeededMonitors(slines, fileLines)
	sc, err := parseSentinelLines(slines, cfg.Dir)
	if err != nil {
		return nil, err
	}
	return &Settings{File: abs, Server: cfg, Sentinel: sc, Notes: notes}, nil
}

// dropSeededMonitors leaves out a `sentinel monitor <name> ...` line given on
// the command line (its line number is past the file's fileLines) when the
// file itself monitors <name> (Vigil). A sentinel started as
// `vigil-sentinel sentinel.conf --sentinel monitor mymaster ...`, the way a
// container is (configs/examples/compose.yaml: a FROM-scratch image has no
// shell to write the file once), saves that line into the file; started
// again with the same command line (docker start, a restarted pod), the
// file's line is the state it learned since (the master after a failover)
// and wins, where redis-sentinel exits with "Duplicate master name.". Two
// monitor lines for one name in the file, or on the command line, are
// still that error. The other command-line lines apply as usual.
func dropSeededMonitors(lines []sentinelLine, fileLines int) ([]sentinelLine, []string) {
	inFile := map[string]string{}
	for _, l := range lines {
		if l.no <= fileLines && len(l.args) >= 2 && strings.EqualFold(l.args[0], "monitor") {
			if _, ok := inFile[l.args[1]]; !ok {
				inFile[l.args[1]] = strings.Join(l.args[2:], " ")
			}
		}
	}
	var out []sentinelLine
	var notes []string
	for _, l := range lines {
		if l.no > fileLines && len(l.args) >= 2 && strings.EqualFold(l.args[0], "monitor") {
			if kept, ok := inFile[l.args[1]]; ok {
				notes = append(notes, fmt.Sprintf("Command line 'sentinel monitor %s %s' ignored: the config file already monitors %s (%s), as this sentinel last saved it",
					l.args[1], strings.Join(l.args[2:], " "), l.args[1], kept))
				continue
			}
		}
		out = append(out, l)
	}
	return out, notes
}

// checkUserLines validates the "user" lines of the file as config.c does
// while loading it (ACLAppendUserForLoading), reporting the first bad one
// with its line number.
func checkUserLines(text string, cfg *configs.Config) error {
	seen := map[string]bool{}
	for i, raw := range strings.Split(text, "\n") {
		line := strings.Trim(raw, " \t\r\n")
		a, err := redisutil.SplitArgs(line)
		if err != nil || len(a) < 2 || !strings.EqualFold(a[0], "user") {
			continue
		}
		if reason := validateUserLine(a, seen, cfg); reason != "" {
			return &configs.ConfigError{Line: i + 1, Text: line, Reason: reason}
		}
	}
	return nil
}

// CheckWritable is sentinelIsRunning's check that the file can be rewritten.
func CheckWritable(path string) error {
	if err := syscall.Access(path, 2 /* W_OK */); err != nil {
		return fmt.Errorf("Sentinel config file %s is not writable: %s. Exiting...", path, redisutil.Strerror(err))
	}
	return nil
}

// preMonitor are the directives of sentinel.c's first pass.
var preMonitor = map[string]bool{
	"sentinel-user": true, "sentinel-pass": true, "current-epoch": true, "myid": true,
	"resolve-hostnames": true, "announce-hostnames": true, "announce-ip": true,
	"announce-port": true, "deny-scripts-reconfig": true,
}

// atoi is C's atoi: optional spaces and sign, then digits up to the first
// non-digit; 0 when there are none.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var v int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		v = v*10 + int64(s[i]-'0')
		if v > 1<<40 {
			break
		}
	}
	if neg {
		return -v
	}
	return v
}

// strtoull is strtoull(s, NULL, 10) for the epochs.
func strtoull(s string) uint64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	var v uint64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n := v*10 + uint64(s[i]-'0')
		if n < v {
			return ^uint64(0)
		}
		v = n
	}
	return v
}

func yesnotoi(s string) int {
	switch strings.ToLower(s) {
	case "yes":
		return 1
	case "no":
		return 0
	}
	return -1
}

// parseSentinelLines is sentinelHandleConfiguration over the three queues.
// Relative script paths are checked for executability from dir, the
// working directory Redis has when it handles these lines.
func parseSentinelLines(lines []sentinelLine, dir string) (sentinel.Config, error) {
	cfg := sentinel.NewConfig()
	var pre, mon, post []sentinelLine
	for _, l := range lines {
		name := strings.ToLower(l.args[0])
		switch {
		case name == "monitor":
			mon = append(mon, l)
		case preMonitor[name]:
			pre = append(pre, l)
		default:
			post = append(post, l)
		}
	}
	index := map[string]int{}
	master := func(name string) *sentinel.MasterConfig {
		if i, ok := index[name]; ok {
			return &cfg.Masters[i]
		}
		return nil
	}
	for _, queue := range [][]sentinelLine{pre, mon, post} {
		for _, l := range queue {
			if reason := handleSentinelLine(&cfg, l.args, master, index, dir); reason != "" {
				return cfg, &configs.ConfigError{Line: l.no, Text: l.text, Reason: reason}
			}
		}
	}
	return cfg, nil
}

// checkAddr is createSentinelAddr's validation, with
// sentinelCheckCreateInstanceErrors' texts.
func checkAddr(host string, port int64, resolve bool) string {
	if port < 0 || port > 65535 {
		return "Invalid port number."
	}
	if _, ok := sentinel.NumericHost(host); ok {
		return ""
	}
	if resolve && host != "" {
		if _, err := net.LookupHost(host); err == nil {
			return ""
		}
	}
	return "Can't resolve instance hostname."
}

// inDir resolves a relative path from dir, as access(2) does from the
// working directory dir.
func inDir(dir, path string) string {
	if dir == "" || path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

func handleSentinelLine(cfg *sentinel.Config, argv []string, master func(string) *sentinel.MasterConfig, index map[string]int, dir string) string {
	argc := len(argv)
	name := strings.ToLower(argv[0])
	var m *sentinel.MasterConfig
	needMaster := func() bool {
		m = master(argv[1])
		return m != nil
	}
	const noMaster = "No such master with specified name."
	switch {
	case name == "monitor" && argc == 5:
		q := atoi(argv[4])
		if q <= 0 {
			return "Quorum must be 1 or greater."
		}
		if master(argv[1]) != nil {
			return "Duplicate master name."
		}
		port := atoi(argv[3])
		if e := checkAddr(argv[2], port, cfg.ResolveHostnames); e != "" {
			return e
		}
		index[argv[1]] = len(cfg.Masters)
		cfg.Masters = append(cfg.Masters, sentinel.MasterConfig{Name: argv[1], IP: argv[2], Port: int(port), Quorum: int(q)})
	case name == "down-after-milliseconds" && argc == 3:
		if !needMaster() {
			return noMaster
		}
		m.DownAfter = atoi(argv[2])
		if m.DownAfter <= 0 {
			return "negative or zero time parameter."
		}
	case name == "failover-timeout" && argc == 3:
		if !needMaster() {
			return noMaster
		}
		m.FailoverTimeout = atoi(argv[2])
		if m.FailoverTimeout <= 0 {
			return "negative or zero time parameter."
		}
	case name == "parallel-syncs" && argc == 3:
		if !needMaster() {
			return noMaster
		}
		m.ParallelSyncs = int(atoi(argv[2]))
	case name == "notification-script" && argc == 3:
		if !needMaster() {
			return noMaster
		}
		if syscall.Access(inDir(dir, argv[2]), 1 /* X_OK */) != nil {
			return "Notification script seems non existing or non executable."
		}
		m.NotificationScript = argv[2]
	case name == "client-reconfig-script" && argc == 3:
		if !needMaster() {
			return noMaster
		}
		if syscall.Access(inDir(dir, argv[2]), 1) != nil {
			return "Client reconfiguration script seems non existing or non executable."
		}
		m.ClientReconfigScript = argv[2]
	case name == "auth-pass" && argc == 3:
		if !needMaster() {
			return noMaster
		}
		m.AuthPass = argv[2]
	case name == "auth-user" && argc == 3:
		if !needMaster() {
			return noMaster
		}
		m.AuthUser = argv[2]
	case name == "current-epoch" && argc == 2:
		if e := strtoull(argv[1]); e > cfg.CurrentEpoch {
			cfg.CurrentEpoch = e
		}
	case name == "myid" && argc == 2:
		if len(argv[1]) != sentinel.RunIDSize {
			return "Malformed Sentinel id in myid option."
		}
		cfg.MyID = argv[1]
	case name == "config-epoch" && argc == 3:
		if !needMaster() {
			return noMaster
		}
		m.ConfigEpoch = strtoull(argv[2])
	case name == "leader-epoch" && argc == 3:
		if !needMaster() {
			return noMaster
		}
		m.LeaderEpoch = strtoull(argv[2])
	case (name == "known-slave" || name == "known-replica") && argc == 4:
		if !needMaster() {
			return noMaster
		}
		port := atoi(argv[3])
		if e := checkAddr(argv[2], port, cfg.ResolveHostnames); e != "" {
			return e
		}
		a := sentinel.Addr{IP: argv[2], Port: int(port)}
		for _, r := range m.KnownReplicas {
			if r == a {
				return "Duplicate master name."
			}
		}
		m.KnownReplicas = append(m.KnownReplicas, a)
	case name == "known-sync-ack" && (argc == 3 || argc == 4):
		// Vigil: the master's sync-ack mode as the sentinel learned it
		// (sentinel/syncack.go): min-replicas-ack and the replication ID.
		if !needMaster() {
			return noMaster
		}
		n := atoi(argv[2])
		if n < 0 || n > 1<<30 {
			return "min-replicas-ack must be 0 or greater."
		}
		m.MinReplicasAck = int(n)
		if argc == 4 {
			m.AckHistory = argv[3]
		}
	case name == "known-sentinel" && (argc == 4 || argc == 5):
		if argc == 5 { // the old form without a run id is ignored
			if !needMaster() {
				return noMaster
			}
			port := atoi(argv[3])
			if e := checkAddr(argv[2], port, cfg.ResolveHostnames); e != "" {
				return e
			}
			m.KnownSentinels = append(m.KnownSentinels, sentinel.KnownSentinel{
				Addr: sentinel.Addr{IP: argv[2], Port: int(port)}, RunID: argv[4]})
		}
	case name == "rename-command" && argc == 4:
		if !needMaster() {
			return noMaster
		}
		for _, r := range m.RenameCommands {
			if strings.EqualFold(r.Command, argv[2]) {
				return "Same command renamed multiple times with rename-command."
			}
		}
		m.RenameCommands = append(m.RenameCommands, sentinel.Rename{Command: argv[2], Renamed: argv[3]})
	case name == "announce-ip" && argc == 2:
		if argv[1] != "" {
			cfg.AnnounceIP = argv[1]
		}
	case name == "announce-port" && argc == 2:
		cfg.AnnouncePort = int(atoi(argv[1]))
	case name == "deny-scripts-reconfig" && argc == 2:
		v := yesnotoi(argv[1])
		if v == -1 {
			return "Please specify yes or no for the deny-scripts-reconfig options."
		}
		cfg.DenyScriptsReconfig = v == 1
	case name == "sentinel-user" && argc == 2:
		cfg.SentinelUser = argv[1]
	case name == "sentinel-pass" && argc == 2:
		cfg.SentinelPass = argv[1]
	case name == "resolve-hostnames" && argc == 2:
		v := yesnotoi(argv[1])
		if v == -1 {
			return "Please specify yes or no for the resolve-hostnames option."
		}
		cfg.ResolveHostnames = v == 1
	case name == "announce-hostnames" && argc == 2:
		v := yesnotoi(argv[1])
		if v == -1 {
			return "Please specify yes or no for the announce-hostnames option."
		}
		cfg.AnnounceHostnames = v == 1
	case name == "master-reboot-down-after-period" && argc == 3:
		if !needMaster() {
			return noMaster
		}
		m.RebootDownAfter = atoi(argv[2])
		if m.RebootDownAfter < 0 {
			return "negative time parameter."
		}
	case name == "forget-after-milliseconds" && argc == 3:
		// Vigil (sentinel/forget.go): 0 = never forget.
		if !needMaster() {
			return noMaster
		}
		m.ForgetAfter = atoi(argv[2])
		if m.ForgetAfter < 0 {
			return "negative time parameter."
		}
	default:
		return "Unrecognized sentinel configuration statement."
	}
	return ""
}

// rewriteKey maps an old line of the file to its rewrite option, as
// rewriteConfigReadOldFile does in sentinel mode: "sentinel <directive>" for
// sentinel lines, the directive name otherwise. Every line is known, so the
// lines the sentinel does not manage stay as they are.
func rewriteKey(args []string) (string, bool) {
	if args[0] == "sentinel" && len(args) > 1 {
		sub := strings.ToLower(args[1])
		if sub == "known-slave" {
			sub = "known-replica"
		}
		return "sentinel " + sub, true
	}
	if d, ok := configs.Lookup(args[0]); ok {
		return d.Name, true
	}
	return args[0], true
}

// sentinelOptions are the rewrite options of rewriteConfigSentinelOption,
// all marked processed so that stale lines (a removed master's) go away.
var sentinelOptions = []string{
	"sentinel myid", "sentinel deny-scripts-reconfig", "sentinel resolve-hostnames",
	"sentinel announce-hostnames", "sentinel monitor", "sentinel down-after-milliseconds",
	"sentinel failover-timeout", "sentinel parallel-syncs", "sentinel notification-script",
	"sentinel client-reconfig-script", "sentinel auth-pass", "sentinel auth-user",
	"sentinel master-reboot-down-after-period", "sentinel forget-after-milliseconds",
	"sentinel config-epoch", "sentinel leader-epoch",
	"sentinel known-replica", "sentinel known-sentinel", "sentinel known-sync-ack", "sentinel rename-command",
	"sentinel current-epoch", "sentinel announce-ip", "sentinel announce-port",
	"sentinel sentinel-user", "sentinel sentinel-pass",
}

// arg quotes a value when the config reader would not read it back as is.
func arg(s string) string {
	if back, err := redisutil.SplitArgs(s); err != nil || len(back) != 1 || back[0] != s {
		return redisutil.Quote(s)
	}
	return s
}

func yn(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// RewriteContent is rewriteConfig in sentinel mode over the old content of
// the file: the server directives the sentinel owns are rewritten in place
// or appended after "# Generated by CONFIG REWRITE" when not default, every
// other line and comment is kept, and the sentinel state replaces the old
// sentinel lines (rewriteConfigSentinelOption).
func RewriteContent(old []byte, srv *configs.Config, sc sentinel.Config, tun sentinel.Tunables) []byte {
	return rewriteContent(old, srv, sc, tun, nil)
}

// rewriteContent is RewriteContent with the users' lines (ACL LIST) that
// rewriteConfigUserOption writes; nil: the default user of requirepass.
func rewriteContent(old []byte, srv *configs.Config, sc sentinel.Config, tun sentinel.Tunables, userLines []string) []byte {
	s := configs.NewRewriteState(old, rewriteKey)

	// Server options: every directive whose value differs from its default
	// (or that is in the file) gets its line, as rewriteConfig does for all
	// standard configs; save is left out in sentinel mode, like Redis.
	for _, d := range configs.Directives() {
		v, _ := srv.Value(d.Name)
		switch d.Name {
		case "port":
			s.RewriteLine("port", "port "+v, v != d.Default)
			continue
		case "dir":
			if srv.Dir != "" {
				s.RewriteLine("dir", "dir "+redisutil.Quote(srv.Dir), true)
			}
			continue
		case "latency-tracking-info-percentiles":
			s.RewriteLine(d.Name, d.Name+" "+v, true)
			continue
		case "save":
			continue
		}
		switch d.Type {
		case configs.TypeSpecial:
			if d.Name == "bind" {
				s.RewriteLine(d.Name, d.Name+" "+v, v != d.Default)
			}
			// others (replicaof, client-output-buffer-limit...) keep their lines
		case configs.TypeString:
			if v == "" && d.Flags&configs.EmptyIsNull != 0 {
				s.RewriteLine(d.Name, "", false)
				continue
			}
			s.RewriteLine(d.Name, d.Name+" "+redisutil.Quote(v), v != d.Default)
		case configs.TypeMemory:
			s.RewriteLine(d.Name, d.Name+" "+formatMemory(v), v != d.Default)
		default:
			s.RewriteLine(d.Name, d.Name+" "+v, v != d.Default)
		}
	}
	for _, l := range userLines {
		s.RewriteLine("user", l, true)
	}
	if userLines == nil && len(srv.Users) == 0 {
		if srv.RequirePass == "" {
			s.RewriteLine("user", "user default on nopass ~* &* +@all", true)
		} else {
			sum := sha256.Sum256([]byte(srv.RequirePass))
			s.RewriteLine("user", "user default on #"+hex.EncodeToString(sum[:])+" ~* &* +@all", true)
		}
	}

	// rewriteConfigSentinelOption.
	s.RewriteLine("sentinel myid", "sentinel myid "+sc.MyID, true)
	s.RewriteLine("sentinel deny-scripts-reconfig", "sentinel deny-scripts-reconfig "+yn(sc.DenyScriptsReconfig), !sc.DenyScriptsReconfig)
	s.RewriteLine("sentinel resolve-hostnames", "sentinel resolve-hostnames "+yn(sc.ResolveHostnames), sc.ResolveHostnames)
	s.RewriteLine("sentinel announce-hostnames", "sentinel announce-hostnames "+yn(sc.AnnounceHostnames), sc.AnnounceHostnames)
	for _, m := range sc.Masters {
		name := arg(m.Name)
		s.RewriteLine("sentinel monitor", fmt.Sprintf("sentinel monitor %s %s %d %d", name, arg(m.IP), m.Port, m.Quorum), true)
		if m.DownAfter != 0 && m.DownAfter != tun.DefaultDownAfter {
			s.RewriteLine("sentinel down-after-milliseconds", fmt.Sprintf("sentinel down-after-milliseconds %s %d", name, m.DownAfter), true)
		}
		if m.FailoverTimeout != 0 && m.FailoverTimeout != tun.DefaultFailoverTimeout {
			s.RewriteLine("sentinel failover-timeout", fmt.Sprintf("sentinel failover-timeout %s %d", name, m.FailoverTimeout), true)
		}
		if m.ParallelSyncs != 0 && m.ParallelSyncs != sentinel.DefaultParallelSyncs {
			s.RewriteLine("sentinel parallel-syncs", fmt.Sprintf("sentinel parallel-syncs %s %d", name, m.ParallelSyncs), true)
		}
		if m.NotificationScript != "" {
			s.RewriteLine("sentinel notification-script", "sentinel notification-script "+name+" "+arg(m.NotificationScript), true)
		}
		if m.ClientReconfigScript != "" {
			s.RewriteLine("sentinel client-reconfig-script", "sentinel client-reconfig-script "+name+" "+arg(m.ClientReconfigScript), true)
		}
		if m.AuthPass != "" {
			s.RewriteLine("sentinel auth-pass", "sentinel auth-pass "+name+" "+arg(m.AuthPass), true)
		}
		if m.AuthUser != "" {
			s.RewriteLine("sentinel auth-user", "sentinel auth-user "+name+" "+arg(m.AuthUser), true)
		}
		if m.RebootDownAfter != 0 {
			s.RewriteLine("sentinel master-reboot-down-after-period", fmt.Sprintf("sentinel master-reboot-down-after-period %s %d", name, m.RebootDownAfter), true)
		}
		if m.ForgetAfter != 0 {
			s.RewriteLine("sentinel forget-after-milliseconds", fmt.Sprintf("sentinel forget-after-milliseconds %s %d", name, m.ForgetAfter), true)
		}
		s.RewriteLine("sentinel config-epoch", fmt.Sprintf("sentinel config-epoch %s %d", name, m.ConfigEpoch), true)
		s.RewriteLine("sentinel leader-epoch", fmt.Sprintf("sentinel leader-epoch %s %d", name, m.LeaderEpoch), true)
		for _, r := range m.KnownReplicas {
			s.RewriteLine("sentinel known-replica", fmt.Sprintf("sentinel known-replica %s %s %d", name, arg(r.IP), r.Port), true)
		}
		for _, k := range m.KnownSentinels {
			s.RewriteLine("sentinel known-sentinel", fmt.Sprintf("sentinel known-sentinel %s %s %d %s", name, arg(k.Addr.IP), k.Addr.Port, arg(k.RunID)), true)
		}
		if m.MinReplicasAck > 0 {
			line := fmt.Sprintf("sentinel known-sync-ack %s %d", name, m.MinReplicasAck)
			if m.AckHistory != "" {
				line += " " + arg(m.AckHistory)
			}
			s.RewriteLine("sentinel known-sync-ack", line, true)
		}
		for _, rn := range m.RenameCommands {
			s.RewriteLine("sentinel rename-command", "sentinel rename-command "+name+" "+arg(rn.Command)+" "+arg(rn.Renamed), true)
		}
	}
	s.RewriteLine("sentinel current-epoch", fmt.Sprintf("sentinel current-epoch %d", sc.CurrentEpoch), true)
	if sc.AnnounceIP != "" {
		// sentinel.c writes it with sdscatrepr: always quoted.
		s.RewriteLine("sentinel announce-ip", "sentinel announce-ip "+redisutil.Quote(sc.AnnounceIP), true)
	}
	if sc.AnnouncePort != 0 {
		s.RewriteLine("sentinel announce-port", fmt.Sprintf("sentinel announce-port %d", sc.AnnouncePort), true)
	}
	if sc.SentinelUser != "" {
		s.RewriteLine("sentinel sentinel-user", "sentinel sentinel-user "+arg(sc.SentinelUser), true)
	}
	if sc.SentinelPass != "" {
		s.RewriteLine("sentinel sentinel-pass", "sentinel sentinel-pass "+arg(sc.SentinelPass), true)
	}
	for _, o := range sentinelOptions {
		s.MarkProcessed(o)
	}
	return s.Content()
}

// formatMemory is rewriteConfigFormatMemory: the largest unit (gb, mb, kb)
// that divides the byte count, else bytes.
func formatMemory(v string) string {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n == 0 {
		return v
	}
	switch {
	case n%(1<<30) == 0:
		return strconv.FormatInt(n/(1<<30), 10) + "gb"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n/(1<<20), 10) + "mb"
	case n%(1<<10) == 0:
		return strconv.FormatInt(n/(1<<10), 10) + "kb"
	}
	return v
}

// Rewrite is sentinelFlushConfig: rewrite sentinel.conf atomically (temp
// file, fsync, rename, directory fsync).
func (st *Settings) Rewrite(sc sentinel.Config, tun sentinel.Tunables) error {
	old, err := os.ReadFile(st.File)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var users []string
	if st.userLines != nil {
		users = st.userLines()
	}
	return configs.WriteFileAtomic(st.File, rewriteContent(old, st.Server, sc, tun, users))
}
