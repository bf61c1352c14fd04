package rdb

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/internal/testutil"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// redisProc is a redis-server started by a test.
type redisProc struct {
	dir  string
	port int
	cmd  *exec.Cmd
}

func needRedis(t *testing.T) string {
	t.Helper()
	return testutil.NeedRedis(t)
}

// startRedis starts redis-server in dir (loading dir/dump.rdb if present)
// and returns once the load has ended.
func startRedis(t *testing.T, dir string, extra ...string) *redisProc {
	t.Helper()
	r := testutil.StartRedis(t, testutil.RedisOptions{Dir: dir, TCP: true, WaitLoaded: true,
		Args: append([]string{"--enable-debug-command", "yes"}, extra...)})
	return &redisProc{dir: dir, port: r.Port, cmd: r.Cmd}
}

func (p *redisProc) client(db int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", p.port), DB: db, Protocol: 2, MaxRetries: -1})
}

// fillRedis writes every type in every encoding Redis 7.0 has.
func fillRedis(t *testing.T, p *redisProc) {
	t.Helper()
	ctx := context.Background()
	c := p.client(0)
	defer c.Close()
	do := func(args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	randBytes := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	}
	do("SET", "s:embstr", "hello")
	do("SET", "s:int", "12345")
	do("SET", "s:neg", "-70000")
	do("SET", "s:int64", "9223372036854775807")
	do("SET", "s:compressible", strings.Repeat("abcdefghij", 50))
	do("SET", "s:binary", randBytes(3000))
	do("SET", "s:big", strings.Repeat(randBytes(1000), 2100)) // > 2 MB
	do("APPEND", "s:raw", "x")
	do("SET", "\x00bin\xffkey", "\r\n")
	do("SET", "s:ttl", "v", "PX", 100000000)
	do("INCRBYFLOAT", "s:float", "1.5")
	do("PFADD", "hll:sparse", "a", "b", "c")
	args := []any{"PFADD", "hll:dense"}
	for i := 0; i < 5000; i++ {
		args = append(args, "e"+strconv.Itoa(i))
	}
	do(args...)

	do("RPUSH", "l:small", "a", "b", "c", "1", "-2", "100000")
	args = []any{"RPUSH", "l:big"}
	for i := 0; i < 20000; i++ {
		args = append(args, "element-"+strconv.Itoa(i))
	}
	do(args...)
	do("LPUSH", "l:big", "head")
	do("CONFIG", "SET", "list-compress-depth", "1")
	args = []any{"RPUSH", "l:compressed"}
	for i := 0; i < 3000; i++ {
		args = append(args, "compressible element "+strconv.Itoa(i%10))
	}
	do(args...)
	do("CONFIG", "SET", "list-compress-depth", "0")
	do("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100")
	do("RPUSH", "l:plain", "a", strings.Repeat("P", 300), "b", randBytes(500))
	do("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1073741824")

	do("SADD", "set:intset", "1", "-3", "70000")
	do("SADD", "set:intset64", "-9223372036854775808", "1")
	do("SADD", "set:ht", "a", "b", "7")
	args = []any{"SADD", "set:big"}
	for i := 0; i < 12000; i++ {
		args = append(args, strconv.Itoa(i*7))
	}
	do(args...)

	do("HSET", "h:lp", "f", "v", "n", "-12", "big", "123456789012")
	do("HSET", "h:long", "f", strings.Repeat("x", 100))
	args = []any{"HSET", "h:big"}
	for i := 0; i < 11000; i++ {
		args = append(args, "field:"+strconv.Itoa(i), strconv.Itoa(i*i))
	}
	do(args...)

	do("ZADD", "z:lp", "1.5", "a", "-2", "b", "inf", "c", "0", "d", "1e300", "1", "3", "int")
	do("ZADD", "z:long", "1", strings.Repeat("m", 100))
	args = []any{"ZADD", "z:big"}
	for i := 0; i < 15000; i++ {
		args = append(args, strconv.FormatFloat(float64(i)/3, 'g', -1, 64), "m"+strconv.Itoa(i))
	}
	do(args...)
	do("ZADD", "z:big", "-inf", "neg")

	for i := 0; i < 5; i++ {
		do("XADD", "st", "*", "f", strconv.Itoa(i), "g", "x")
	}
	do("XGROUP", "CREATE", "st", "grp", "0")
	do("XREADGROUP", "GROUP", "grp", "alice", "COUNT", "2", "STREAMS", "st", ">")
	do("XREADGROUP", "GROUP", "grp", "bob", "COUNT", "1", "STREAMS", "st", ">")
	do("XGROUP", "CREATE", "st:empty", "g", "$", "MKSTREAM")
	do("FUNCTION", "LOAD", interopLib)

	c3 := p.client(3)
	defer c3.Close()
	if err := c3.Set(ctx, "db3", "three", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c3.RPush(ctx, "db3:list", "x").Err(); err != nil {
		t.Fatal(err)
	}
}

const interopLib = "#!lua name=interoplib\nredis.register_function('interopf', function(keys, args) return 1 end)"

// redisShow renders key as show renders a loaded value.
func redisShow(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	ctx := context.Background()
	typ, err := c.Type(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	switch typ {
	case "string":
		return c.Get(ctx, key).Val()
	case "list":
		return fmt.Sprint(c.LRange(ctx, key, 0, -1).Val())
	case "set":
		m := c.SMembers(ctx, key).Val()
		slices.Sort(m)
		return "{" + strings.Join(m, " ") + "}"
	case "hash":
		var s []string
		for f, v := range c.HGetAll(ctx, key).Val() {
			s = append(s, f+":"+v)
		}
		slices.Sort(s)
		return "{" + strings.Join(s, " ") + "}"
	case "zset":
		var s []string
		for _, z := range c.ZRangeWithScores(ctx, key, 0, -1).Val() {
			s = append(s, z.Member.(string)+":"+strconv.FormatFloat(z.Score, 'g', -1, 64))
		}
		return "[" + strings.Join(s, " ") + "]"
	case "stream":
		return "stream:" + strconv.FormatInt(c.XLen(ctx, key).Val(), 10)
	}
	return "type " + typ
}

func showAny(v keyspace.Value) string {
	if s, ok := v.(*keyspace.Stream); ok {
		return "stream:" + strconv.FormatUint(s.Len(), 10)
	}
	return show(v)
}

func loadFile(t *testing.T, path string) (Info, []Record) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return loadAll(t, b, defOpts())
}

// TestInteropRedis: (a) a dump.rdb saved by redis-server loads here with the
// values, TTLs and encodings Redis reports after loading the same file; (b)
// the same records written here pass redis-check-rdb and load in
// redis-server with equal DEBUG DIGEST-VALUE for every key; (c) DUMP
// payloads cross both ways.
func TestInteropRedis(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	dir1 := t.TempDir()
	r1 := startRedis(t, dir1)
	fillRedis(t, r1)
	c0 := r1.client(0)
	defer c0.Close()
	// DEBUG RELOAD saves and loads dump.rdb: the encodings are then those
	// Redis gives the file's values, to compare with ours.
	if err := c0.Do(ctx, "DEBUG", "RELOAD").Err(); err != nil {
		t.Fatal(err)
	}
	info, recs := loadFile(t, filepath.Join(dir1, "dump.rdb"))
	if !slices.Contains(info.Functions, interopLib) {
		t.Errorf("functions %q", info.Functions)
	}
	auxKeys := map[string]bool{}
	for _, a := range info.Aux {
		auxKeys[a.Key] = true
	}
	for _, k := range []string{"redis-ver", "redis-bits", "ctime", "used-mem", "aof-base"} {
		if !auxKeys[k] {
			t.Errorf("aux %s missing: %v", k, info.Aux)
		}
	}
	clients := map[int]*redis.Client{}
	client := func(db int) *redis.Client {
		if clients[db] == nil {
			clients[db] = r1.client(db)
		}
		return clients[db]
	}
	n0, _ := c0.DBSize(ctx).Result()
	n3, _ := client(3).DBSize(ctx).Result()
	if len(recs) != int(n0+n3) {
		t.Errorf("%d records, redis has %d keys", len(recs), n0+n3)
	}
	for _, r := range recs {
		c := client(r.DB)
		key := string(r.Key)
		if got, want := showAny(r.Value), redisShow(t, c, key); got != want {
			t.Errorf("db %d %q: loaded %.200q, redis %.200q", r.DB, key, got, want)
		}
		if enc := c.ObjectEncoding(ctx, key).Val(); r.Value.Encoding().String() != enc {
			t.Errorf("db %d %q: encoding %s, redis %s", r.DB, key, r.Value.Encoding(), enc)
		}
		if typ := c.Type(ctx, key).Val(); r.Value.Type().String() != typ {
			t.Errorf("db %d %q: type %s, redis %s", r.DB, key, r.Value.Type(), typ)
		}
		pexp := c.Do(ctx, "PEXPIRETIME", key).Val().(int64)
		if pexp < 0 {
			pexp = 0
		}
		if r.ExpireAt != pexp {
			t.Errorf("db %d %q: expire %d, redis %d", r.DB, key, r.ExpireAt, pexp)
		}
	}

	// (b) write the records back with our encoder.
	dir2 := t.TempDir()
	var buf bytes.Buffer
	e, err := NewEncoder(&buf, EncodeOptions{Compress: true, Checksum: true, Aux: info.Aux, Functions: info.Functions})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := e.WriteItem(keyspace.Item{DB: r.DB, Key: string(r.Key), Value: r.Value, ExpireAt: r.ExpireAt}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Finish(); err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(dir2, "dump.rdb")
	if err := os.WriteFile(ours, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("redis-check-rdb", ours).CombinedOutput(); err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	r2 := startRedis(t, dir2)
	d1 := c0.Do(ctx, "DEBUG", "DIGEST").Val()
	c2 := r2.client(0)
	defer c2.Close()
	if d2 := c2.Do(ctx, "DEBUG", "DIGEST").Val(); d1 != d2 {
		t.Errorf("DEBUG DIGEST: redis's file %v, ours %v", d1, d2)
	}
	for _, r := range recs {
		a, b := client(r.DB), r2.client(r.DB)
		key := string(r.Key)
		da := a.Do(ctx, "DEBUG", "DIGEST-VALUE", key).Val()
		db := b.Do(ctx, "DEBUG", "DIGEST-VALUE", key).Val()
		if fmt.Sprint(da) != fmt.Sprint(db) {
			t.Errorf("db %d %q: digest %v, ours %v", r.DB, key, da, db)
		}
		if ea, eb := a.ObjectEncoding(ctx, key).Val(), b.ObjectEncoding(ctx, key).Val(); ea != eb {
			t.Errorf("db %d %q: encoding after loading ours %s, redis's %s", r.DB, key, eb, ea)
		}
		b.Close()
	}
	if fl := c2.Do(ctx, "FUNCTION", "LIST").Val(); !strings.Contains(fmt.Sprint(fl), "interoplib") {
		t.Errorf("FUNCTION LIST after loading ours: %v", fl)
	}

	// (c) DUMP payloads both ways.
	for _, r := range recs {
		if r.DB != 0 {
			continue
		}
		key := string(r.Key)
		p, err := c0.Dump(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		v, err := ParsePayload([]byte(p), keyspace.DefaultEncodingConfig())
		if err != nil {
			t.Errorf("%q: ParsePayload of redis's DUMP: %v", key, err)
			continue
		}
		if showAny(v) != showAny(r.Value) {
			t.Errorf("%q: DUMP payload decodes to %.100q", key, showAny(v))
		}
		mine := DumpPayload(r.Value, true)
		restore := []any{"RESTORE", "restored:" + key, r.ExpireAt, string(mine)}
		if r.ExpireAt != 0 {
			restore = append(restore, "ABSTTL")
		}
		if err := c0.Do(ctx, restore...).Err(); err != nil {
			t.Errorf("%q: RESTORE of our payload: %v", key, err)
			continue
		}
		da := c0.Do(ctx, "DEBUG", "DIGEST-VALUE", key).Val()
		db := c0.Do(ctx, "DEBUG", "DIGEST-VALUE", "restored:"+key).Val()
		if fmt.Sprint(da) != fmt.Sprint(db) {
			t.Errorf("%q: restored digest %v, original %v", key, db, da)
		}
		// Byte for byte what Redis dumps (l:plain's PLAIN nodes, made under
		// a debug packed threshold, included), except where Redis's order
		// is its dict's (hashtable sets and hashes: seeded per process).
		if !bytes.Equal(mine, []byte(p)) && r.Value.Encoding() != keyspace.EncodingHashtable {
			t.Errorf("%q: our DUMP payload differs from redis's:\n%x\n%x", key, mine, p)
		}
		c0.Del(ctx, "restored:"+key)
	}
	for _, c := range clients {
		c.Close()
	}
}

// TestRedisLoadsOurOptions: a file written with every encoder option
// (RESIZEDB hints, IDLE, lists with compressed nodes, no compression otherwise)
// passes redis-check-rdb and loads in redis-server with the same contents.
func TestRedisLoadsOurOptions(t *testing.T) {
	needRedis(t)
	items := sampleItems()
	for _, opts := range []EncodeOptions{
		{Checksum: true, LRU: true, Now: 1 << 40},
		{Compress: true, LFU: true},
	} {
		dir := t.TempDir()
		var buf bytes.Buffer
		e, err := NewEncoder(&buf, opts)
		if err != nil {
			t.Fatal(err)
		}
		e.SetDBSizes(0, len(items), 2)
		for _, it := range items {
			if err := e.WriteItem(keyspace.Item{Key: it.key, Value: it.v, ExpireAt: it.exp + 1<<42*boolInt(it.exp != 0), LastAccess: 1000, Freq: 9}); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Finish(); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "dump.rdb")
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("redis-check-rdb", file).CombinedOutput(); err != nil || !strings.Contains(string(out), "RDB looks OK") {
			t.Fatalf("redis-check-rdb: %v\n%s", err, out)
		}
		policy := "allkeys-lru"
		if opts.LFU {
			policy = "allkeys-lfu"
		}
		p := startRedis(t, dir, "--maxmemory-policy", policy)
		c := p.client(0)
		ctx := context.Background()
		if n := c.DBSize(ctx).Val(); int(n) != len(items) {
			t.Fatalf("redis loaded %d keys of %d", n, len(items))
		}
		for _, it := range items {
			// OBJECT FREQ first: reading the value may increment the
			// counter (LFULogIncr is probabilistic).
			if opts.LFU {
				if f := c.Do(ctx, "OBJECT", "FREQ", it.key).Val(); fmt.Sprint(f) != "9" {
					t.Errorf("%q: OBJECT FREQ %v", it.key, f)
				}
			}
			if got, want := redisShow(t, c, it.key), show(it.v); got != want {
				t.Errorf("%q: redis has %.100q, want %.100q", it.key, got, want)
			}
		}
		c.Close()
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestReencodeIsByteIdentical: a dump.rdb of values without hashtables
// (whose order is the dict's, seeded per process), loaded and written
// back with the same aux fields, functions and RESIZEDB hints, is the same
// file byte for byte.
func TestReencodeIsByteIdentical(t *testing.T) {
	needRedis(t)
	dir := t.TempDir()
	p := startRedis(t, dir)
	fillRedis(t, p)
	ctx := context.Background()
	c := p.client(0)
	defer c.Close()
	c3 := p.client(3)
	defer c3.Close()
	// Drop the hashtable-encoded keys (sets, hashes) and keys Redis
	// stores as PLAIN nodes (a debug threshold).
	for _, cl := range []*redis.Client{c, c3} {
		for _, k := range cl.Keys(ctx, "*").Val() {
			if enc := cl.ObjectEncoding(ctx, k).Val(); enc == "hashtable" || k == "l:plain" {
				cl.Del(ctx, k)
			}
		}
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	info, recs := loadAll(t, orig, defOpts())
	var buf bytes.Buffer
	e, err := NewEncoder(&buf, EncodeOptions{Compress: true, Checksum: true, Aux: info.Aux, Functions: info.Functions})
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[int][2]int{}
	for _, r := range recs {
		s := sizes[r.DB]
		s[0]++
		if r.ExpireAt != 0 {
			s[1]++
		}
		sizes[r.DB] = s
	}
	for db, s := range sizes {
		e.SetDBSizes(db, s[0], s[1])
	}
	for _, r := range recs {
		if err := e.WriteItem(keyspace.Item{DB: r.DB, Key: string(r.Key), Value: r.Value, ExpireAt: r.ExpireAt}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Finish(); err != nil {
		t.Fatal(err)
	}
	mine := buf.Bytes()
	if !bytes.Equal(mine, orig) {
		i := 0
		for i < len(mine) && i < len(orig) && mine[i] == orig[i] {
			i++
		}
		t.Fatalf("re-encoded file differs at byte %d of %d/%d:\nours  %x\nredis %x", i, len(mine), len(orig),
			mine[max(0, i-16):min(len(mine), i+32)], orig[max(0, i-16):min(len(orig), i+32)])
	}
}
