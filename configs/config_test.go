package configs

import (
	"bufio"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// readRedisDefaults reads testdata/redis-7.0.15-defaults.tsv, the CONFIG GET
// output of a real redis-server 7.0.15.
func readRedisDefaults(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("testdata/redis-7.0.15-defaults.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		name, value, _ := strings.Cut(line, "\t")
		m[name] = value
	}
	return m
}

// TestDefaultsMatchRedis checks the table against redis-server 7.0.15: the
// same directives and aliases, the same defaults, formatted the same way.
func TestDefaultsMatchRedis(t *testing.T) {
	want := readRedisDefaults(t)
	c := Default()
	got := map[string]string{}
	all := c.Get("*")
	for i := 0; i < len(all); i += 2 {
		if _, dup := got[all[i]]; dup {
			t.Errorf("CONFIG GET * lists %s twice", all[i])
		}
		got[all[i]] = all[i+1]
	}
	for _, d := range table {
		if d.Flags&Hidden != 0 {
			if _, listed := got[d.Name]; listed {
				t.Errorf("hidden %s matched by *", d.Name)
			}
			v, _ := c.Value(d.Name)
			got[d.Name] = v
		}
	}
	// The reference server ran with these.
	got["port"], got["dir"] = "16398", "/tmp/rt"
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("missing directive %s (Redis default %q)", name, w)
			continue
		}
		if g != w {
			t.Errorf("%s = %q, Redis says %q", name, g, w)
		}
	}
	for name := range got {
		if d, _ := lookup(name); d != nil && d.Flags&VigilOnly != 0 {
			continue // Vigil's own (sync-ack mode)
		}
		if _, ok := want[name]; !ok && !vigilOnly[name] {
			t.Errorf("directive %s unknown to Redis 7.0.15", name)
		}
	}
	// Default, the field, agrees with the value.
	for _, d := range table {
		if d.Name != "dir" && d.get(c) != d.Default {
			t.Errorf("%s: Default %q but Default() has %q", d.Name, d.Default, d.get(c))
		}
	}
}

func TestDefaultTypedFields(t *testing.T) {
	c := Default()
	wd, _ := os.Getwd()
	checks := []struct {
		name      string
		got, want any
	}{
		{"Bind", c.Bind, []string{"*", "-::*"}},
		{"Port", c.Port, 6379},
		{"TCPBacklog", c.TCPBacklog, 511},
		{"MaxClients", c.MaxClients, 10000},
		{"Timeout", c.Timeout, 0},
		{"TCPKeepAlive", c.TCPKeepAlive, 300},
		{"ProtectedMode", c.ProtectedMode, true},
		{"LogLevel", c.LogLevel, "notice"},
		{"LogFile", c.LogFile, ""},
		{"Databases", c.Databases, 16},
		{"Hz", c.Hz, 10},
		{"DynamicHz", c.DynamicHz, true},
		{"ProtoMaxBulkLen", c.ProtoMaxBulkLen, int64(512 << 20)},
		{"ClientQueryBufferLimit", c.ClientQueryBufferLimit, int64(1 << 30)},
		{"EnableDebugCommand", c.EnableDebugCommand, "no"},
		{"SlowlogLogSlowerThan", c.SlowlogLogSlowerThan, int64(10000)},
		{"SlowlogMaxLen", c.SlowlogMaxLen, 128},
		{"Dir", c.Dir, wd},
		{"DBFilename", c.DBFilename, "dump.rdb"},
		{"Save", c.Save, []SaveParam{{3600, 1}, {300, 100}, {60, 10000}}},
		{"AppendFilename", c.AppendFilename, "appendonly.aof"},
		{"AppendDirName", c.AppendDirName, "appendonlydir"},
		{"AppendFsync", c.AppendFsync, "everysec"},
		{"ReplBacklogSize", c.ReplBacklogSize, int64(1 << 20)},
		{"ReplBacklogTTL", c.ReplBacklogTTL, int64(3600)},
		{"ReplTimeout", c.ReplTimeout, 60},
		{"ReplPingReplicaPeriod", c.ReplPingReplicaPeriod, 10},
		{"ReplicaPriority", c.ReplicaPriority, 100},
		{"ReplicaReadOnly", c.ReplicaReadOnly, true},
		{"ReplicaServeStaleData", c.ReplicaServeStaleData, true},
		{"ReplicaAnnounced", c.ReplicaAnnounced, true},
		{"ReplDisklessSync", c.ReplDisklessSync, true},
		{"MinReplicasMaxLag", c.MinReplicasMaxLag, 10},
		{"MaxmemoryPolicy", c.MaxmemoryPolicy, "noeviction"},
		{"BusyReplyThreshold", c.BusyReplyThreshold, int64(5000)},
		{"ClientOutputBufferLimits", c.ClientOutputBufferLimits, [3]BufferLimit{{0, 0, 0}, {256 << 20, 64 << 20, 60}, {32 << 20, 8 << 20, 60}}},
		{"ReplicaOf", c.ReplicaOf, Address{}},
		{"RenameCommands", c.RenameCommands, map[string]string{}},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Config)
		want   string // substring of the error, "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"port", func(c *Config) { c.Port = 70000 }, `port "70000": argument must be between 0 and 65535 inclusive`},
		{"maxclients", func(c *Config) { c.MaxClients = 0 }, "maxclients"},
		{"hz low", func(c *Config) { c.Hz = 0 }, "hz 0"},
		{"hz high", func(c *Config) { c.Hz = 501 }, "hz 501"},
		{"loglevel", func(c *Config) { c.LogLevel = "loud" }, "loglevel"},
		{"loglevel nothing", func(c *Config) { c.LogLevel = "nothing" }, ""},
		{"policy", func(c *Config) { c.MaxmemoryPolicy = "random" }, "maxmemory-policy"},
		{"dbfilename", func(c *Config) { c.DBFilename = "a/b.rdb" }, "dbfilename can't be a path"},
		{"appendfilename", func(c *Config) { c.AppendFilename = "" }, "appendfilename can't be empty"},
		{"databases", func(c *Config) { c.Databases = 0 }, "databases"},
		{"slowlog", func(c *Config) { c.SlowlogLogSlowerThan = -2 }, "slowlog-log-slower-than"},
		{"save", func(c *Config) { c.Save = []SaveParam{{0, 1}} }, "Invalid save parameters"},
		{"dir", func(c *Config) { c.Dir = "relative" }, "dir"},
		{"replicaof port", func(c *Config) { c.ReplicaOf = Address{"h", 70000} }, "Invalid master port"},
		{"replicaof", func(c *Config) { c.ReplicaOf = Address{"h", 6380} }, ""},
		{"cluster and replicaof", func(c *Config) {
			c.ClusterEnabled = true
			c.ReplicaOf = Address{"h", 6380}
		}, "replicaof directive not allowed in cluster mode"},
		{"bind", func(c *Config) { c.Bind = slices.Repeat([]string{"127.0.0.1"}, 17) }, "Too many bind addresses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.modify(c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestCloneIsDeep(t *testing.T) {
	c := Default()
	n := c.Clone()
	n.Bind[0] = "10.0.0.1"
	n.Save[0].Seconds = 1
	n.RenameCommands["get"] = "fetch"
	n.extraBool["activerehashing"] = false
	if c.Bind[0] != "*" || c.Save[0].Seconds != 3600 || len(c.RenameCommands) != 0 {
		t.Error("Clone shares state with the original")
	}
	if v, _ := c.Value("lazyfree-lazy-eviction"); v != "no" {
		t.Errorf("Value = %q", v)
	}
}

func TestKeyspaceEvents(t *testing.T) {
	tests := []struct{ in, out string }{
		{"", ""},
		{"KEA", "AKE"},
		{"g$lshzxetd", "A"},
		{"gAKn", "AK"}, // n is not part of A and is dropped when A is printed, as in Redis
		{"Em", "Em"},
		{"Kx", "xK"},
		{"$lshzxetdgKEm", "AKEm"},
	}
	for _, tt := range tests {
		f, ok := ParseKeyspaceEvents(tt.in)
		if !ok || FormatKeyspaceEvents(f) != tt.out {
			t.Errorf("%q -> %d %v -> %q, want %q", tt.in, f, ok, FormatKeyspaceEvents(f), tt.out)
		}
	}
	if _, ok := ParseKeyspaceEvents("Q"); ok {
		t.Error("Q accepted")
	}
}
