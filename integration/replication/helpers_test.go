package replication

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

var ctx = context.Background()

const syncTimeout = 20 * time.Second

// node is a server process and a client to it.
type node struct {
	*integration.Server
	c *redis.Client
}

// startVigil starts vigil-server with args (diskless sync without delay
// unless args say otherwise).
func startVigil(args ...string) *node {
	GinkgoHelper()
	s := integration.StartServer(append([]string{"--repl-diskless-sync-delay", "0"}, args...)...)
	return &node{Server: s, c: s.Client(2)}
}

// startRedis starts Debian's redis-server with the same defaults, or skips.
func startRedis(args ...string) *node {
	GinkgoHelper()
	if redisServerBin == "" {
		Skip("redis-server not installed: apt-get install -y redis-server redis-tools")
	}
	old := integration.ServerBin
	integration.ServerBin = redisServerBin
	defer func() { integration.ServerBin = old }()
	s := integration.StartServer(append([]string{"--repl-diskless-sync-delay", "0"}, args...)...)
	return &node{Server: s, c: s.Client(2)}
}

// info returns one INFO section as a map.
func (n *node) info(section string) map[string]string {
	GinkgoHelper()
	s, err := n.c.Info(ctx, section).Result()
	Expect(err).NotTo(HaveOccurred())
	m := map[string]string{}
	for _, l := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// infoG is info inside an Eventually: an error (a connection the
// sentinels' CLIENT KILL closed) fails the attempt, not the spec.
func (n *node) infoG(g Gomega, section string) map[string]string {
	s, err := n.c.Info(ctx, section).Result()
	g.Expect(err).NotTo(HaveOccurred())
	m := map[string]string{}
	for _, l := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

func (n *node) stat(name string) int64 {
	GinkgoHelper()
	v, err := strconv.ParseInt(n.info("stats")[name], 10, 64)
	Expect(err).NotTo(HaveOccurred())
	return v
}

func (n *node) replicaOf(m *node) {
	GinkgoHelper()
	Expect(n.c.Do(ctx, "REPLICAOF", "127.0.0.1", m.Port).Err()).To(Succeed())
}

// waitSynced polls until r's link to m is up and r applied everything m
// has streamed.
func waitSynced(m, r *node) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		ri := r.info("replication")
		g.Expect(ri["master_link_status"]).To(Equal("up"))
		mi := m.info("replication")
		g.Expect(ri["slave_repl_offset"]).To(Equal(mi["master_repl_offset"]))
	}).WithTimeout(syncTimeout).WithPolling(50 * time.Millisecond).Should(Succeed())
}

// dump renders every key of databases 0..15 with its type, PEXPIRETIME and
// value in a canonical form, sorted: equal dumps are equal keyspaces.
// Types, strings and TTLs are read with pipelines (fast enough for tens of
// thousands of keys), the few aggregates one by one.
func (n *node) dump() []string {
	GinkgoHelper()
	var out []string
	for db := 0; db < 16; db++ {
		c := redis.NewClient(&redis.Options{Addr: n.Addr(), DB: db, MaxRetries: -1, ReadTimeout: 30 * time.Second})
		keys, err := c.Keys(ctx, "*").Result()
		Expect(err).NotTo(HaveOccurred())
		sort.Strings(keys)
		for start := 0; start < len(keys); start += 1000 {
			batch := keys[start:min(start+1000, len(keys))]
			types := make([]*redis.StatusCmd, len(batch))
			gets := make([]*redis.StringCmd, len(batch))
			exps := make([]*redis.Cmd, len(batch))
			_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i, k := range batch {
					types[i] = p.Type(ctx, k)
					gets[i] = p.Get(ctx, k) // WRONGTYPE for aggregates
					exps[i] = p.Do(ctx, "PEXPIRETIME", k)
				}
				return nil
			})
			_ = err // per-command errors are checked below
			for i, k := range batch {
				t := types[i].Val()
				var v string
				switch t {
				case "string":
					Expect(gets[i].Err()).NotTo(HaveOccurred())
					v = gets[i].Val()
				case "list":
					v = fmt.Sprint(c.LRange(ctx, k, 0, -1).Val())
				case "set":
					m := c.SMembers(ctx, k).Val()
					sort.Strings(m)
					v = fmt.Sprint(m)
				case "zset":
					v = fmt.Sprint(c.ZRangeWithScores(ctx, k, 0, -1).Val())
				case "hash":
					var fs []string
					for f, x := range c.HGetAll(ctx, k).Val() {
						fs = append(fs, f+"="+x)
					}
					sort.Strings(fs)
					v = fmt.Sprint(fs)
				case "stream":
					// Entries, metadata, groups, PELs and consumers, without
					// the clocks (delivery and seen times are each node's).
					v = fmt.Sprint(c.Do(ctx, "XRANGE", k, "-", "+").Val(), c.Do(ctx, "XINFO", "GROUPS", k).Val())
					info := c.Do(ctx, "XINFO", "STREAM", k).Val().(map[any]any)
					for _, f := range []string{"length", "last-generated-id", "max-deleted-entry-id", "entries-added", "recorded-first-entry-id", "radix-tree-keys"} {
						v += fmt.Sprint(" ", f, "=", info[f])
					}
					for _, g := range c.XInfoGroups(ctx, k).Val() {
						v += fmt.Sprint(" ", c.Do(ctx, "XPENDING", k, g.Name).Val())
						for _, cons := range c.XInfoConsumers(ctx, k, g.Name).Val() {
							v += fmt.Sprint(" ", g.Name, "/", cons.Name, ":", cons.Pending)
						}
					}
				default:
					v = fmt.Sprint(c.Do(ctx, "DUMP", k).Val() != nil)
				}
				out = append(out, fmt.Sprintf("%d %s %s %v %s", db, k, t, exps[i].Val(), v))
			}
		}
		c.Close()
	}
	return out
}

// populate writes keys of every type (some with TTLs) into dbs 0 and 3,
// and a stream with consumer groups into db 0.
func populate(rc *redis.Client, prefix string) {
	GinkgoHelper()
	c := rc.Conn() // SELECT sticks to one connection
	defer c.Close()
	for _, db := range []int{0, 3} {
		cmds := [][]any{
			{"SELECT", db},
			{"SET", prefix + "str", "v"},
			{"SET", prefix + "int", "12345"},
			{"SET", prefix + "ttl", "t", "EX", "1000"},
			{"RPUSH", prefix + "list", "a", "b", "c"},
			{"SADD", prefix + "set", "x", "y", "z"},
			{"SADD", prefix + "intset", 1, 2, 3},
			{"ZADD", prefix + "zset", 1, "a", 2.5, "b"},
			{"HSET", prefix + "hash", "f1", "v1", "f2", "v2"},
			{"PFADD", prefix + "hll", "a", "b"},
			{"SELECT", 0},
		}
		for _, cmd := range cmds {
			Expect(c.Do(ctx, cmd...).Err()).To(Succeed(), "%v", cmd)
		}
	}
	// A stream with deleted entries, two groups, pending entries (read,
	// acknowledged, claimed) and a NOACK reader.
	st := prefix + "stream"
	for _, cmd := range [][]any{
		{"XADD", st, "1-1", "f", "v1"}, {"XADD", st, "2-1", "f", "v2", "g", "w"}, {"XADD", st, "*", "f", "v3"},
		{"XADD", st, "MAXLEN", "~", "100", "*", "f", "v4"}, {"XDEL", st, "2-1"},
		{"XGROUP", "CREATE", st, "g1", "0"}, {"XGROUP", "CREATE", st, "g2", "$", "ENTRIESREAD", "3"},
		{"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", st, ">"},
		{"XREADGROUP", "GROUP", "g1", "bob", "NOACK", "STREAMS", st, ">"},
		{"XACK", st, "g1", "1-1"}, {"XCLAIM", st, "g1", "carol", "0", "1-1", "FORCE"},
		{"XGROUP", "CREATECONSUMER", st, "g2", "idle"},
	} {
		Expect(c.Do(ctx, cmd...).Err()).To(Succeed(), "%v", cmd)
	}
	big := make([]any, 0, 600)
	big = append(big, "RPUSH", prefix+"biglist")
	for i := 0; i < 500; i++ {
		big = append(big, strings.Repeat("x", i%50)+strconv.Itoa(i))
	}
	Expect(c.Do(ctx, big...).Err()).To(Succeed())
}

func itoa(n int) string { return strconv.Itoa(n) }
