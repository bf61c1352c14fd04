package configs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// writeFile writes a file under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// debianConf returns testdata/debian-redis.conf (Debian's stock
// /etc/redis/redis.conf of redis-server 7.0.15) copied into a temporary
// directory, with its "dir /var/lib/redis" pointed at that directory so the
// test does not depend on the host.
func debianConf(t *testing.T) (path, dir string) {
	t.Helper()
	data, err := os.ReadFile("testdata/debian-redis.conf")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if !strings.Contains(text, "\ndir /var/lib/redis\n") {
		t.Fatal("testdata/debian-redis.conf has no dir line")
	}
	text = strings.Replace(text, "\ndir /var/lib/redis\n", "\ndir "+dir+"\n", 1)
	return writeFile(t, dir, "redis.conf", text), dir
}

func TestLoadDebianRedisConf(t *testing.T) {
	path, dir := debianConf(t)
	c, err := Load(LoadOptions{ConfigFile: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"File", c.File, path},
		{"Bind", c.Bind, []string{"127.0.0.1", "-::1"}},
		{"Port", c.Port, 6379},
		{"ProtectedMode", c.ProtectedMode, true},
		{"Daemonize", c.Daemonize, true},
		{"PidFile", c.PidFile, "/run/redis/redis-server.pid"},
		{"LogFile", c.LogFile, "/var/log/redis/redis-server.log"},
		{"LogLevel", c.LogLevel, "notice"},
		{"Dir", c.Dir, dir},
		{"Save", c.Save, []SaveParam{{3600, 1}, {300, 100}, {60, 10000}}},
		{"AppendFilename", c.AppendFilename, "appendonly.aof"},
		{"ReplDisklessSync", c.ReplDisklessSync, true},
		{"NotifyKeyspaceEvents", c.NotifyKeyspaceEvents, 0},
		{"ClientOutputBufferLimits", c.ClientOutputBufferLimits, defaultBufferLimits},
		{"OOMScoreAdjValues", c.OOMScoreAdjValues, [3]int{0, 200, 800}},
		{"Hz", c.Hz, 10},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
	for name, want := range map[string]string{
		"proc-title-template":       "{title} {listen-addr} {server-mode}",
		"auto-aof-rewrite-min-size": "67108864",
		"jemalloc-bg-thread":        "yes",
		"set-proc-title":            "yes",
		"client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 " +
			"pubsub 33554432 8388608 60",
	} {
		if got, _ := c.Value(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// TestLoadEtcRedisConf loads the host's /etc/redis/redis.conf when there
// is one (Debian's redis-server installed), as it is.
func TestLoadEtcRedisConf(t *testing.T) {
	if _, err := os.ReadFile("/etc/redis/redis.conf"); err != nil {
		t.Skip("no readable /etc/redis/redis.conf")
	}
	if _, err := os.Stat("/var/lib/redis"); err != nil {
		t.Skip("no /var/lib/redis")
	}
	if _, err := Load(LoadOptions{ConfigFile: "/etc/redis/redis.conf"}); err != nil {
		t.Fatal(err)
	}
}

// fatal is the block redis-server prints.
func fatal(line int, file, text, reason string) string {
	s := "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\n"
	if line > 0 {
		s += "Reading the configuration file, at line " + strconv.Itoa(line)
		if file != "" {
			s += " (" + file + ")"
		}
		s += "\n>>> '" + text + "'\n"
	}
	return s + reason
}

// TestLoadErrors checks errors against what redis-server 7.0.15 prints for
// the same input (each case was run through the real binary).
func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	known := func(name string) bool { return name == "get" || name == "set" || name == "config" }
	tests := []struct {
		name   string
		file   string // content of a config file, "" = none
		stdin  string // content of stdin, "" = not read
		args   []string
		line   int
		text   string
		reason string
	}{
		{"flag not an integer", "", "", []string{"--port", "abc"}, 2, `port "abc"`, "argument couldn't be parsed into an integer"},
		{"two values", "", "", []string{"--port", "1", "2"}, 2, `port "1" "2"`, "wrong number of arguments"},
		{"unknown directive", "", "", []string{"--foo", "bar"}, 2, `foo "bar"`, "Bad directive or wrong number of arguments"},
		{"leading zero", "", "", []string{"--port", "007"}, 2, `port "007"`, "argument couldn't be parsed into an integer"},
		{"minus zero", "", "", []string{"--port", "-0"}, 2, `port "-0"`, "argument couldn't be parsed into an integer"},
		{"plus sign", "", "", []string{"--port", "+1"}, 2, `port "+1"`, "argument couldn't be parsed into an integer"},
		{"range", "", "", []string{"--port", "70000"}, 2, `port "70000"`, "argument must be between 0 and 65535 inclusive"},
		{"unsigned range", "", "", []string{"--maxclients", "0"}, 2, `maxclients "0"`, "argument must be between 1 and 4294967295 inclusive"},
		{"unsigned negative", "", "", []string{"--maxclients", "-1"}, 2, `maxclients "-1"`, "argument must be between 1 and 4294967295 inclusive"},
		{"octal", "", "", []string{"--unixsocketperm", "999"}, 2, `unixsocketperm "999"`, "argument couldn't be parsed as an octal number"},
		{"octal range", "", "", []string{"--unixsocketperm", "-1"}, 2, `unixsocketperm "-1"`, "argument must be between 0 and 777 inclusive"},
		{"long range", "", "", []string{"--slowlog-max-len", "-1"}, 2, `slowlog-max-len "-1"`, "argument must be between 0 and 9223372036854775807 inclusive"},
		{"enum", "", "", []string{"--loglevel", "bad"}, 2, `loglevel "bad"`, "argument(s) must be one of the following: debug, verbose, notice, warning"},
		{"enum policy", "", "", []string{"--maxmemory-policy", "--x"}, 2, `maxmemory-policy "--x"`,
			"argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"},
		{"bool", "", "", []string{"--daemonize", "maybe"}, 2, `daemonize "maybe"`, "argument must be 'yes' or 'no'"},
		{"events", "", "", []string{"--notify-keyspace-events", "Q"}, 2, `notify-keyspace-events "Q"`, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."},
		{"memory", "", "", []string{"--maxmemory", "1x"}, 2, `maxmemory "1x"`, "argument must be a memory value"},
		{"memory range", "", "", []string{"--proto-max-bulk-len", "99999999999999999999"}, 2, `proto-max-bulk-len "99999999999999999999"`, "argument must be between 1048576 and 9223372036854775807 inclusive"},
		{"percent", "", "", []string{"--maxmemory-clients", "200%"}, 2, `maxmemory-clients "200%"`, "percentage argument must be less or equal to 100"},
		{"save odd", "", "", []string{"--save", "1"}, 2, `save "1"`, "Invalid save parameters"},
		{"save split only alone", "", "", []string{"--save", "60 1", "5"}, 2, `save "60 1" "5"`, "Invalid save parameters"},
		{"appendfilename", "", "", []string{"--appendfilename", "/x"}, 2, `appendfilename "/x"`, "appendfilename can't be a path, just a filename"},
		{"dir", "", "", []string{"--dir", "/nonexistent"}, 2, `dir "/nonexistent"`, "No such file or directory"},
		{"dir not a dir", "", "", []string{"--dir", "/dev/null"}, 2, `dir "/dev/null"`, "Not a directory"},
		{"first error wins", "", "", []string{"--hz", "abc", "--port", "2"}, 2, `hz "abc"`, "argument couldn't be parsed into an integer"},
		{"bare save", "", "", []string{"--save", "--port", "5", "--loglevel", "x"}, 4, `loglevel "x"`, "argument(s) must be one of the following: debug, verbose, notice, warning"},
		{"option as value", "", "", []string{"--port", "--save"}, 2, `port "--save"`, "argument couldn't be parsed into an integer"},
		{"rename unknown", "", "", []string{"--rename-command", "foo", "bar"}, 2, `rename-command "foo" "bar"`, "No such command in rename-command"},
		{"rename target exists", "", "", []string{"--rename-command", "get", "set"}, 2, `rename-command "get" "set"`, "Target command name already exists"},
		{"rename renamed", "", "", []string{"--rename-command", "get", "", "--rename-command", "get", "x"}, 3, `rename-command "get" "x"`, "No such command in rename-command"},
		{"user alone", "", "", []string{"--user"}, 2, `user`, "Bad directive or wrong number of arguments"},
		{"deprecated wrong arity", "", "", []string{"--list-max-ziplist-entries", "5", "6"}, 2, `list-max-ziplist-entries "5" "6"`, "Bad directive or wrong number of arguments"},
		{"module config", "", "", []string{"--foo.bar"}, 2, `foo.bar`, "Module config specified without value"},
		{"master port", "", "", []string{"--replicaof", "localhost", "99999"}, 2, `replicaof "localhost" "99999"`, "Invalid master port"},
		{"obuf arity", "", "", []string{"--client-output-buffer-limit", "normal", "1", "2"}, 2, `client-output-buffer-limit "normal" "1" "2"`, "Wrong number of arguments in buffer limit configuration."},
		{"obuf class", "", "", []string{"--client-output-buffer-limit", "master", "1", "2", "3"}, 2, `client-output-buffer-limit "master" "1" "2" "3"`, "Invalid client class specified in buffer limit configuration."},
		{"obuf value", "", "", []string{"--client-output-buffer-limit", "normal", "1x", "2", "3"}, 2, `client-output-buffer-limit "normal" "1x" "2" "3"`, "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		{"oom arity", "", "", []string{"--oom-score-adj-values", "1", "2"}, 2, `oom-score-adj-values "1" "2"`, "wrong number of arguments"},
		{"percentiles", "", "", []string{"--latency-tracking-info-percentiles", "101"}, 2, `latency-tracking-info-percentiles "101"`, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"},
		{"shutdown flags", "", "", []string{"--shutdown-on-sigterm", "save nosave"}, 2, `shutdown-on-sigterm "save nosave"`, "shutdown options SAVE and NOSAVE can't be used simultaneously"},
		{"activedefrag", "", "", []string{"--activedefrag", "yes"}, 2, `activedefrag "yes"`, "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution"},
		{"file line", "# comment\nport abc\n", "", nil, 2, "port abc", "argument couldn't be parsed into an integer"},
		{"file unknown", "nosuchdirective yes\n", "", nil, 1, "nosuchdirective yes", "Bad directive or wrong number of arguments"},
		{"file unbalanced", "port 1\n  bind \"127.0.0.1  \n", "", nil, 2, `bind "127.0.0.1`, "Unbalanced quotes in configuration line"},
		{"file sentinel", "sentinel monitor m 127.0.0.1 6379 2\n", "", nil, 1, "sentinel monitor m 127.0.0.1 6379 2", "sentinel directive while not in sentinel mode"},
		{"file then args", "port 16394\n# x\nsave 60 1\n", "", []string{"--port", "abc"}, 5, `port "abc"`, "argument couldn't be parsed into an integer"},
		{"file without newline then args", "port 16394", "", []string{"--port", "abc"}, 2, `port "abc"`, "argument couldn't be parsed into an integer"},
		{"stdin alone", "", "port 99999999\n", nil, 1, "port 99999999", "argument must be between 0 and 65535 inclusive"},
		{"stdin after file", "port 16394\n# x\nsave 60 1\n", "port x\n", nil, 4, "port x", "argument couldn't be parsed into an integer"},
		{"cluster replicaof", "cluster-enabled yes\nreplicaof 127.0.0.1 6380\n", "", nil, 0, "", "replicaof directive not allowed in cluster mode"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := LoadOptions{Args: tt.args, KnownCommand: known}
			wantFile := ""
			if tt.file != "" {
				opts.ConfigFile = writeFile(t, dir, "c"+strconv.Itoa(i)+".conf", tt.file)
				wantFile = opts.ConfigFile
			}
			if tt.stdin != "" {
				opts.Stdin = strings.NewReader(tt.stdin)
				if opts.ConfigFile == "" {
					opts.ConfigFile = "-"
				} else {
					opts.ReadStdin = true
				}
			}
			// The part of the text the line is in: file, then stdin, then
			// the arguments.
			fileLines := strings.Count(tt.file, "\n")
			if tt.file != "" && !strings.HasSuffix(tt.file, "\n") {
				fileLines++
			}
			switch {
			case tt.line == 0:
				wantFile = ""
			case tt.line <= fileLines:
			case tt.stdin != "" && tt.line <= fileLines+strings.Count(tt.stdin, "\n"):
				wantFile = "-"
			default:
				wantFile = ""
			}
			c, err := Load(opts)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Load = %v, %v; want a *ConfigError", c, err)
			}
			if ce.Line != tt.line || ce.Text != tt.text || ce.Reason != tt.reason || ce.File != wantFile {
				t.Errorf("got line %d %q %q file %q\nwant line %d %q %q file %q",
					ce.Line, ce.Text, ce.Reason, ce.File, tt.line, tt.text, tt.reason, wantFile)
			}
			shown := wantFile
			if shown == "-" {
				shown = "(stdin)"
			} else if shown != "" {
				shown = "(" + shown + ")"
			}
			want := fatal(tt.line, "", tt.text, tt.reason)
			if shown != "" {
				want = strings.Replace(want, "at line "+strconv.Itoa(tt.line), "at line "+strconv.Itoa(tt.line)+" "+shown, 1)
			}
			if err.Error() != want {
				t.Errorf("Error() =\n%s\nwant\n%s", err.Error(), want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.conf")
	_, err := Load(LoadOptions{ConfigFile: p})
	var fe *FileError
	if !errors.As(err, &fe) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load = %v, want a *FileError", err)
	}
	want := "Fatal error, can't open config file '" + p + "': No such file or directory"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestLoadInclude(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "sub/b.conf", "maxmemory 2mb\ninclude sub/c.conf\nport 7001\n")
	writeFile(t, dir, "sub/c.conf", "port 7002\nhz 20\n")
	writeFile(t, dir, "conf.d/10-first.conf", "loglevel debug\ntimeout 10\n")
	writeFile(t, dir, "conf.d/20-second.conf", "loglevel warning\n")
	writeFile(t, dir, "conf.d/ignored.txt", "bogus\n")
	main := writeFile(t, dir, "main.conf", strings.Join([]string{
		"dir " + dir, // later relative includes resolve here, as after Redis's chdir
		"port 7000",
		"include sub/b.conf", // nested: b includes c, then sets port 7001
		"include conf.d/*.conf",
		"include nothing/*.conf", // a glob matching nothing is fine
		"timeout 20",             // after the include: overrides it
		"",
	}, "\n"))
	c, err := Load(LoadOptions{ConfigFile: main})
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 7001 || c.Hz != 20 || c.Maxmemory != 2<<20 || c.LogLevel != "warning" || c.Timeout != 20 {
		t.Errorf("port %d hz %d maxmemory %d loglevel %s timeout %d", c.Port, c.Hz, c.Maxmemory, c.LogLevel, c.Timeout)
	}
	if c.File != main {
		t.Errorf("File = %q, want the main file", c.File)
	}

	// Relative to the working directory when no dir came first.
	t.Chdir(dir)
	c, err = Load(LoadOptions{Args: []string{"--include", "sub/c.conf"}})
	if err != nil || c.Port != 7002 {
		t.Fatalf("relative include: %v, port %d", err, c.Port)
	}

	// An error in an included file names that file and its own line.
	bad := writeFile(t, dir, "bad.conf", "\n\nhz x\n")
	top := writeFile(t, dir, "top.conf", "port 1\ninclude "+bad+"\n")
	_, err = Load(LoadOptions{ConfigFile: top})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.File != bad || ce.Line != 3 || ce.Text != "hz x" {
		t.Fatalf("error in include: %#v", err)
	}
	if !strings.Contains(err.Error(), "Reading the configuration file, at line 3 ("+bad+")\n>>> 'hz x'\n") {
		t.Errorf("Error() = %q", err.Error())
	}

	// A missing include is Redis's fatal open error, with the path as written.
	top = writeFile(t, dir, "top2.conf", "include missing.conf\n")
	_, err = Load(LoadOptions{ConfigFile: top})
	if err == nil || err.Error() != "Fatal error, can't open config file 'missing.conf': No such file or directory" {
		t.Fatalf("missing include: %v", err)
	}

	// An include loop stops instead of recursing forever.
	loop := filepath.Join(dir, "loop.conf")
	writeFile(t, dir, "loop.conf", "include "+loop+"\n")
	if _, err = Load(LoadOptions{ConfigFile: loop}); !errors.As(err, &ce) || !strings.Contains(ce.Reason, "include") {
		t.Fatalf("include loop: %v", err)
	}
}

func TestLoadArgsOverrideFile(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "r.conf", "port 7000\nmaxmemory 1mb\nsave 60 1\nbind 127.0.0.1\nrequirepass file\n")
	tests := []struct {
		name  string
		args  []string
		check func(*Config) bool
	}{
		{"flag wins", []string{"--port", "7001"}, func(c *Config) bool { return c.Port == 7001 && c.Maxmemory == 1<<20 }},
		{"name and value in one argument", []string{"--port 7002"}, func(c *Config) bool { return c.Port == 7002 }},
		{"save appends while loading", []string{"--save", "10", "5"}, func(c *Config) bool {
			return reflect.DeepEqual(c.Save, []SaveParam{{60, 1}, {10, 5}})
		}},
		{"save empty", []string{"--save", ""}, func(c *Config) bool { return len(c.Save) == 0 }},
		{"bare save last", []string{"--port", "7003", "--save"}, func(c *Config) bool { return len(c.Save) == 0 && c.Port == 7003 }},
		{"bare save before option", []string{"--save", "--port", "7004"}, func(c *Config) bool { return len(c.Save) == 0 && c.Port == 7004 }},
		{"save in one value", []string{"--save", "60 1 30 2"}, func(c *Config) bool {
			return reflect.DeepEqual(c.Save, []SaveParam{{60, 1}, {60, 1}, {30, 2}})
		}},
		{"bind in one value", []string{"--bind", "127.0.0.1 -::1"}, func(c *Config) bool { return reflect.DeepEqual(c.Bind, []string{"127.0.0.1", "-::1"}) }},
		{"bind several values", []string{"--bind", "127.0.0.1", "::1"}, func(c *Config) bool { return reflect.DeepEqual(c.Bind, []string{"127.0.0.1", "::1"}) }},
		{"replicaof", []string{"--replicaof", "10.0.0.1", "6380"}, func(c *Config) bool { return c.ReplicaOf == Address{"10.0.0.1", 6380} }},
		{"slaveof alias", []string{"--slaveof", "10.0.0.1 6381"}, func(c *Config) bool { return c.ReplicaOf == Address{"10.0.0.1", 6381} }},
		{"empty password", []string{"--requirepass", ""}, func(c *Config) bool { return c.RequirePass == "" }},
		{"negative value", []string{"--list-max-listpack-size", "-1"}, func(c *Config) bool { return c.ListMaxListpackSize == -1 }},
		{"value with spaces and quotes", []string{"--masterauth", `p "w" d`}, func(c *Config) bool { return c.MasterAuth == `p "w" d` }},
		{"uppercase name", []string{"--PORT", "7005"}, func(c *Config) bool { return c.Port == 7005 }},
		{"rename", []string{"--rename-command", "CONFIG", ""}, func(c *Config) bool { return reflect.DeepEqual(c.RenameCommands, map[string]string{"config": ""}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(LoadOptions{ConfigFile: file, Args: tt.args})
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Errorf("unexpected config: port %d save %v bind %v replicaof %v", c.Port, c.Save, c.Bind, c.ReplicaOf)
			}
		})
	}
}

func TestLoadStdin(t *testing.T) {
	c, err := Load(LoadOptions{ConfigFile: "-", Stdin: strings.NewReader("port 7002\nmaxmemory 3mb\n"), Args: []string{"--port", "7003"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 7003 || c.Maxmemory != 3<<20 || c.File != "" {
		t.Errorf("port %d maxmemory %d file %q", c.Port, c.Maxmemory, c.File)
	}
	if err := c.Rewrite(); !errors.Is(err, ErrNoConfigFile) || err.Error() != "ERR The server is running without a config file" {
		t.Errorf("Rewrite() = %v", err)
	}

	// A file and stdin: stdin is read after the file.
	file := writeFile(t, t.TempDir(), "r.conf", "port 7000\ntimeout 5\n")
	c, err = Load(LoadOptions{ConfigFile: file, ReadStdin: true, Stdin: strings.NewReader("port 7001\n")})
	if err != nil || c.Port != 7001 || c.Timeout != 5 || c.File != file {
		t.Fatalf("file+stdin: %v port %d timeout %d file %q", err, c.Port, c.Timeout, c.File)
	}
}

func TestLoadSpecials(t *testing.T) {
	file := writeFile(t, t.TempDir(), "r.conf", strings.Join([]string{
		"save 900 1",
		"save 300 10",
		"user alice on >pw ~* +@all",
		"loadmodule /usr/lib/redis/mod.so arg1 arg2",
		"mymod.setting a b",
		"sentinel", // a lone sentinel line is fine
		"list-max-ziplist-entries 512",
		"lua-replicate-commands yes",
		"rename-command get fetch",
		"rename-command fetch grab", // renaming the renamed command
		"rename-command flushall \"\"",
		"slave-priority 5",
		"lua-time-limit 100",
		"hz 1000", // clamped
		"unixsocketperm 700",
		"maxmemory 1gb",
		"maxmemory-clients 10%",
		"notify-keyspace-events KEA",
		"client-output-buffer-limit replica 1gb 512mb 30 pubsub 0 0 0",
		"shutdown-on-sigterm force now nosave",
		"oom-score-adj relative",
		"LogLevel WARNING",
		"",
	}, "\n"))
	c, err := Load(LoadOptions{ConfigFile: file})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Save", c.Save, []SaveParam{{900, 1}, {300, 10}}},
		{"Users", c.Users, [][]string{{"alice", "on", ">pw", "~*", "+@all"}}},
		{"LoadModules", c.LoadModules, [][]string{{"/usr/lib/redis/mod.so", "arg1", "arg2"}}},
		{"ModuleConfigs", c.ModuleConfigs, map[string]string{"mymod.setting": "a b"}},
		{"RenameCommands", c.RenameCommands, map[string]string{"get": "grab", "flushall": ""}},
		{"ReplicaPriority", c.ReplicaPriority, 5},
		{"BusyReplyThreshold", c.BusyReplyThreshold, int64(100)},
		{"Hz", c.Hz, 500},
		{"UnixSocketPerm", c.UnixSocketPerm, uint32(0o700)},
		{"Maxmemory", c.Maxmemory, int64(1 << 30)},
		{"NotifyKeyspaceEvents", c.NotifyKeyspaceEvents, NotifyAll | NotifyKeyspace | NotifyKeyevent},
		{"ClientOutputBufferLimits", c.ClientOutputBufferLimits, [3]BufferLimit{{0, 0, 0}, {1 << 30, 512 << 20, 30}, {0, 0, 0}}},
		{"ShutdownOnSigterm", c.ShutdownOnSigterm, ShutdownNoSave | ShutdownNow | ShutdownForce},
		{"LogLevel", c.LogLevel, "warning"},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
	for name, want := range map[string]string{
		"maxmemory-clients":   "10%",
		"unixsocketperm":      "700",
		"oom-score-adj":       "yes",
		"shutdown-on-sigterm": "nosave now force",
		"slave-priority":      "5",
		"lua-time-limit":      "100",
	} {
		if got, _ := c.Value(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestArgsToConfig(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--port", "6380"}, `port "6380" `},
		{[]string{"--port 6380"}, "port 6380 "},
		{[]string{"--port", "6380", "--replicaof", "h", "1"}, "port \"6380\" \nreplicaof \"h\" \"1\" "},
		{[]string{"--save"}, `save ""`},
		{[]string{"--SAVE", "--port", "5"}, "SAVE \"\"\nport \"5\" "},
		{[]string{"--save", ""}, `save "" `},
		{[]string{"--port", "--save"}, `port "--save" `},
		{[]string{"--sentinel", "--port", "1"}, "sentinel \nport \"1\" "},
		{[]string{"--maxmemory-policy", "--x"}, `maxmemory-policy "--x" `},
		{[]string{"foo"}, `"foo" `},
		{[]string{"--masterauth", "a\"b\n"}, `masterauth "a\"b\n" `},
		{[]string{"--list-max-listpack-size", "-2"}, `list-max-listpack-size "-2" `},
	}
	for _, tt := range tests {
		if got := ArgsToConfig(tt.args); got != tt.want {
			t.Errorf("ArgsToConfig(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}
