package integration

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// Lock scripts as client libraries ship them: the Redis documentation's
// single-instance lock (compare-and-delete, compare-and-expire) and
// Redisson's reentrant lock on a hash with PEXPIRE.
const (
	itCompareAndDelete = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`
	itCompareAndExpire = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("pexpire",KEYS[1],ARGV[2]) else return 0 end`
	itRedissonTryLock  = `if (redis.call('exists', KEYS[1]) == 0) then ` +
		`redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; ` +
		`if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then ` +
		`redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; ` +
		`return redis.call('pttl', KEYS[1]);`
	itRedissonUnlock = `if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end; ` +
		`local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); ` +
		`if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; ` +
		`else redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1; end; return nil;`
)

// keysOfEveryType makes one key of each type (small encodings) and one of
// each big encoding.
func keysOfEveryType(ctx context.Context, c *redis.Client) {
	c.Set(ctx, "str", "hello", 0)
	c.Set(ctx, "int", "12345", 0)
	c.Set(ctx, "raw", strings.Repeat("x", 100), 0)
	c.RPush(ctx, "list", "a", "b", "c")
	c.HSet(ctx, "hash", "f1", "v1", "f2", "v2")
	c.SAdd(ctx, "iset", 1, 2, 3)
	c.SAdd(ctx, "set", "a", "b", "c")
	c.ZAdd(ctx, "zset", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})
	c.PFAdd(ctx, "hll", "a", "b", "c")
	var many []interface{}
	for i := 0; i < 200; i++ {
		many = append(many, fmt.Sprintf("m%03d", i))
	}
	c.RPush(ctx, "biglist", many...)
	c.SAdd(ctx, "bigset", many...)
	var fields []interface{}
	var zs []redis.Z
	for i := 0; i < 200; i++ {
		fields = append(fields, fmt.Sprintf("f%03d", i), i)
		zs = append(zs, redis.Z{Score: float64(i), Member: fmt.Sprintf("m%03d", i)})
	}
	c.HSet(ctx, "bighash", fields...)
	c.ZAdd(ctx, "bigzset", zs...)
	c.Set(ctx, "_", "", 0) // a separator in the records
}

var everyTypeKey = []string{"str", "int", "raw", "list", "hash", "iset", "set", "zset", "hll",
	"biglist", "bigset", "bighash", "bigzset"}

var _ = Describe("Data types through go-redis against redis-server 7.0", Ordered, Label("interop"), func() {
	var vigil, oracle string

	BeforeAll(func() {
		oracle = startRealRedis()
		vigil = StartServer().Addr()
	})

	DescribeTable("give go-redis the same typed results and errors as redis-server",
		func(script OracleScript) {
			for _, proto := range []int{2, 3} {
				want := RunOracleScript(oracle, proto, script)
				got := RunOracleScript(vigil, proto, script)
				ExpectSameSteps(got, want, proto)
			}
		},

		Entry("strings", func(ctx context.Context, c *redis.Client) {
			c.Set(ctx, "s", "hello", 0)
			c.Get(ctx, "s")
			c.Get(ctx, "nosuch")
			c.SetArgs(ctx, "s", "world", redis.SetArgs{Get: true})
			c.SetArgs(ctx, "s", "x", redis.SetArgs{Mode: "NX", Get: true})
			c.SetNX(ctx, "s", "y", 0)
			c.SetXX(ctx, "nosuch", "y", 0)
			c.GetDel(ctx, "s")
			c.Set(ctx, "s", "v", time.Hour)
			c.GetEx(ctx, "s", 0)
			c.TTL(ctx, "s")
			c.Do(ctx, "GETEX", "s", "PERSIST")
			c.TTL(ctx, "s")
			c.Do(ctx, "GETEX", "s", "EX", "0")
			c.Do(ctx, "GETEX", "s", "EX", "10", "PX", "10")
			c.Do(ctx, "SET", "s", "v", "EX", "0")
			c.Do(ctx, "SET", "s", "v", "EX", "9223372036854775807")
			c.Do(ctx, "SET", "s", "v", "PX", "notanint")
			c.Do(ctx, "SET", "s", "v", "NX", "XX")
			c.Do(ctx, "SET", "s", "v", "KEEPTTL", "EX", "5")
			c.Do(ctx, "SETEX", "s", "-1", "v")
			c.Do(ctx, "PSETEX", "s", "0", "v")
			c.MSet(ctx, "a", "1", "b", "2")
			c.MSetNX(ctx, "b", "3", "c", "4")
			c.MGet(ctx, "a", "b", "c", "list")
			c.Do(ctx, "MSET", "a")
			c.Append(ctx, "a", "23")
			c.StrLen(ctx, "a")
			c.Incr(ctx, "a")
			c.IncrBy(ctx, "a", -200)
			c.DecrBy(ctx, "a", 5)
			c.Do(ctx, "INCRBY", "a", "1.5")
			c.Set(ctx, "big", "9223372036854775807", 0)
			c.Incr(ctx, "big")
			c.Set(ctx, "small", "-9223372036854775808", 0)
			c.Decr(ctx, "small")
			c.Do(ctx, "DECRBY", "small", "-9223372036854775808")
			c.IncrByFloat(ctx, "f", 0.1)
			c.IncrByFloat(ctx, "f", 1e300)
			c.Do(ctx, "INCRBYFLOAT", "f", "inf")
			c.Do(ctx, "INCRBYFLOAT", "f", "nan")
			c.Set(ctx, "f", "1.5e3", 0)
			c.IncrByFloat(ctx, "f", 1)
			c.Get(ctx, "f")
			c.Set(ctx, "s", "Hello World", 0)
			c.GetRange(ctx, "s", 0, 4)
			c.GetRange(ctx, "s", -5, -1)
			c.GetRange(ctx, "s", 5, 1)
			c.SetRange(ctx, "s", 6, "Redis")
			c.SetRange(ctx, "s", -1, "x")
			c.Do(ctx, "SETRANGE", "s", "536870912", "x")
			c.SetRange(ctx, "pad", 3, "x")
			c.Get(ctx, "pad")
			c.Do(ctx, "SUBSTR", "s", "0", "2")
			c.Set(ctx, "k1", "ohmytext", 0)
			c.Set(ctx, "k2", "mynewtext", 0)
			c.LCS(ctx, &redis.LCSQuery{Key1: "k1", Key2: "k2"})
			c.LCS(ctx, &redis.LCSQuery{Key1: "k1", Key2: "k2", Len: true})
			c.LCS(ctx, &redis.LCSQuery{Key1: "k1", Key2: "k2", Idx: true, WithMatchLen: true, MinMatchLen: 2})
			c.RPush(ctx, "list", "x")
			c.Get(ctx, "list")
			c.Append(ctx, "list", "x")
			c.Incr(ctx, "list")
			c.StrLen(ctx, "list")
			c.SetRange(ctx, "list", 0, "x")
			c.Do(ctx, "GET")
			c.Do(ctx, "GET", "a", "b")
		}),

		Entry("bitmaps", func(ctx context.Context, c *redis.Client) {
			c.SetBit(ctx, "b", 7, 1)
			c.SetBit(ctx, "b", 100, 1)
			c.GetBit(ctx, "b", 7)
			c.GetBit(ctx, "b", 1000)
			c.Get(ctx, "b")
			c.BitCount(ctx, "b", nil)
			c.BitCount(ctx, "b", &redis.BitCount{Start: 0, End: 0})
			c.BitCount(ctx, "b", &redis.BitCount{Start: 0, End: 7, Unit: "BIT"})
			c.BitPos(ctx, "b", 1)
			c.BitPos(ctx, "b", 0, 0, -1)
			c.Do(ctx, "BITPOS", "b", "1", "8", "200", "BIT")
			c.BitOpAnd(ctx, "dst", "b", "nosuch")
			c.BitOpOr(ctx, "dst", "b", "nosuch")
			c.BitOpNot(ctx, "dst", "b")
			c.Get(ctx, "dst")
			c.Do(ctx, "BITOP", "NOT", "dst", "a", "b")
			c.BitField(ctx, "bf", "SET", "u8", 0, 255, "GET", "u8", 0, "INCRBY", "u8", 0, 10)
			c.BitField(ctx, "bf", "OVERFLOW", "SAT", "INCRBY", "i8", 8, 200, "OVERFLOW", "FAIL", "INCRBY", "i8", 8, 1)
			c.Do(ctx, "BITFIELD_RO", "bf", "GET", "u8", "0", "GET", "i8", "#1")
			c.Do(ctx, "BITFIELD", "bf", "GET", "u64", "0")
			c.Do(ctx, "BITFIELD", "bf", "SET", "i8", "-1", "0")
			c.Do(ctx, "BITFIELD_RO", "bf", "SET", "u8", "0", "1")
			c.Do(ctx, "SETBIT", "b", "4294967296", "1")
			c.Do(ctx, "SETBIT", "b", "1", "2")
			c.Do(ctx, "GETBIT", "b", "-1")
			c.Do(ctx, "BITCOUNT", "b", "0")
			c.LPush(ctx, "l", "x")
			c.SetBit(ctx, "l", 1, 1)
			c.BitCount(ctx, "l", nil)
		}),

		Entry("hashes", func(ctx context.Context, c *redis.Client) {
			c.HSet(ctx, "h", "a", "1", "b", "2")
			c.HSet(ctx, "h", "a", "10", "c", "3")
			c.HSetNX(ctx, "h", "a", "x")
			c.HSetNX(ctx, "h", "d", "4")
			c.HGet(ctx, "h", "a")
			c.HGet(ctx, "h", "nosuch")
			c.HGet(ctx, "nosuch", "a")
			c.HMGet(ctx, "h", "a", "nosuch", "d")
			c.HGetAll(ctx, "h")
			c.HGetAll(ctx, "nosuch")
			c.HKeys(ctx, "h")
			c.HVals(ctx, "h")
			c.HLen(ctx, "h")
			c.HExists(ctx, "h", "a")
			c.HExists(ctx, "h", "zz")
			c.HStrLen(ctx, "h", "a")
			c.HDel(ctx, "h", "a", "zz")
			c.HIncrBy(ctx, "h", "b", 5)
			c.HIncrBy(ctx, "h", "new", -3)
			c.HIncrByFloat(ctx, "h", "f", 0.1)
			c.HIncrByFloat(ctx, "h", "f", 2.5e-2)
			c.Do(ctx, "HINCRBYFLOAT", "h", "f", "inf")
			c.HSet(ctx, "h", "s", "abc")
			c.HIncrBy(ctx, "h", "s", 1)
			c.HIncrByFloat(ctx, "h", "s", 1)
			c.HSet(ctx, "h", "max", "9223372036854775807")
			c.HIncrBy(ctx, "h", "max", 1)
			c.HMSet(ctx, "h2", "x", "1")
			c.HRandField(ctx, "h", 2)
			c.HRandField(ctx, "h", -5)
			c.HRandField(ctx, "nosuch", 2)
			c.Do(ctx, "HSET", "h", "a")
			c.Do(ctx, "HSET", "h")
			c.Do(ctx, "HRANDFIELD", "h", "1", "WITHVALUES", "x")
			c.Do(ctx, "HINCRBY", "h", "b", "x")
			c.Set(ctx, "str", "x", 0)
			c.HSet(ctx, "str", "a", "1")
			c.HGet(ctx, "str", "a")
			c.HGetAll(ctx, "str")
			c.HLen(ctx, "str")
			c.HDel(ctx, "h", "b", "new", "f", "s", "max", "c", "d")
			c.Exists(ctx, "h")
		}),

		Entry("lists", func(ctx context.Context, c *redis.Client) {
			c.RPush(ctx, "l", "a", "b", "c")
			c.LPush(ctx, "l", "z", "y")
			c.LPushX(ctx, "nosuch", "a")
			c.RPushX(ctx, "l", "d")
			c.LRange(ctx, "l", 0, -1)
			c.LRange(ctx, "l", -100, 100)
			c.LRange(ctx, "l", 5, 2)
			c.LLen(ctx, "l")
			c.LIndex(ctx, "l", 0)
			c.LIndex(ctx, "l", -1)
			c.LIndex(ctx, "l", 100)
			c.LSet(ctx, "l", 1, "Z")
			c.LSet(ctx, "l", 100, "x")
			c.LSet(ctx, "nosuch", 0, "x")
			c.LInsertBefore(ctx, "l", "b", "ab")
			c.LInsertAfter(ctx, "l", "nosuch", "x")
			c.LInsert(ctx, "nosuch", "BEFORE", "a", "x")
			c.Do(ctx, "LINSERT", "l", "MIDDLE", "a", "x")
			c.RPush(ctx, "l", "a", "a")
			c.LPos(ctx, "l", "a", redis.LPosArgs{})
			c.LPos(ctx, "l", "a", redis.LPosArgs{Rank: -1})
			c.LPosCount(ctx, "l", "a", 0, redis.LPosArgs{})
			c.LPos(ctx, "l", "zz", redis.LPosArgs{})
			c.Do(ctx, "LPOS", "l", "a", "RANK", "0")
			c.Do(ctx, "LPOS", "l", "a", "COUNT", "-1")
			c.Do(ctx, "LPOS", "l", "a", "RANK", "-9223372036854775808")
			c.LRem(ctx, "l", -1, "a")
			c.LRem(ctx, "l", 0, "nosuch")
			c.LRange(ctx, "l", 0, -1)
			c.LPop(ctx, "l")
			c.RPop(ctx, "l")
			c.LPopCount(ctx, "l", 2)
			c.RPopCount(ctx, "l", 0)
			c.LPopCount(ctx, "nosuch", 2)
			c.Do(ctx, "LPOP", "l", "-1")
			c.LTrim(ctx, "l", 1, -1)
			c.LRange(ctx, "l", 0, -1)
			c.RPush(ctx, "src", "1", "2", "3")
			c.LMove(ctx, "src", "dst", "LEFT", "RIGHT")
			c.RPopLPush(ctx, "src", "src")
			c.LRange(ctx, "src", 0, -1)
			c.Do(ctx, "LMOVE", "src", "dst", "UP", "LEFT")
			c.LMPop(ctx, "left", 2, "nosuch", "src")
			c.LMPop(ctx, "right", 10, "nosuch", "dst")
			c.LMPop(ctx, "left", 1, "nosuch")
			c.Do(ctx, "LMPOP", "0", "a", "LEFT")
			c.Do(ctx, "LMPOP", "1", "a", "LEFT", "COUNT", "0")
			c.Do(ctx, "LMPOP", "1", "a", "MIDDLE")
			c.Exists(ctx, "src", "dst")
			c.Set(ctx, "str", "x", 0)
			c.LPush(ctx, "str", "a")
			c.LRange(ctx, "str", 0, -1)
			c.LLen(ctx, "str")
			c.RPush(ctx, "l2", "a")
			c.LMove(ctx, "l2", "str", "LEFT", "LEFT")
			c.LRange(ctx, "l2", 0, -1)
			c.BLPop(ctx, time.Second, "str")
			c.Do(ctx, "BLPOP", "l2", "-1")
			c.Do(ctx, "BLPOP", "l2", "abc")
			c.Do(ctx, "BLPOP", "l2", "0")
			c.Do(ctx, "BRPOP", "nosuch", "l2", "0.5")
			c.Do(ctx, "BLMPOP", "0", "1", "nosuch", "LEFT")
		}),

		Entry("sets", func(ctx context.Context, c *redis.Client) {
			c.SAdd(ctx, "s", "a", "b", "c", "a")
			c.SAdd(ctx, "t", "b", "c", "d")
			c.SAdd(ctx, "i", 3, 1, 2)
			c.SMembers(ctx, "i")
			c.SMembers(ctx, "s")
			c.SCard(ctx, "s")
			c.SIsMember(ctx, "s", "a")
			c.SMIsMember(ctx, "s", "a", "z")
			c.SInter(ctx, "s", "t")
			c.SInter(ctx, "s", "nosuch")
			c.SUnion(ctx, "s", "t", "nosuch")
			c.SDiff(ctx, "s", "t")
			c.SInterStore(ctx, "d1", "s", "t")
			c.SUnionStore(ctx, "d2", "s", "t")
			c.SDiffStore(ctx, "d3", "s", "t")
			c.SInterStore(ctx, "d1", "s", "nosuch")
			c.Exists(ctx, "d1")
			c.SInterCard(ctx, 0, "s", "t")
			c.SInterCard(ctx, 1, "s", "t")
			c.Do(ctx, "SINTERCARD", "0", "s")
			c.Do(ctx, "SINTERCARD", "2", "s", "t", "LIMIT", "-1")
			c.SMove(ctx, "s", "t", "a")
			c.SMove(ctx, "s", "t", "zz")
			c.SRem(ctx, "t", "a", "zz")
			c.SPop(ctx, "i")
			c.SPopN(ctx, "i", 5)
			c.Exists(ctx, "i")
			c.SRandMember(ctx, "t")
			c.SRandMemberN(ctx, "t", -5)
			c.SRandMemberN(ctx, "t", 2)
			c.SRandMemberN(ctx, "nosuch", 2)
			c.Do(ctx, "SPOP", "t", "-1")
			c.SAdd(ctx, "ints", 1, 2, 3)
			c.SAdd(ctx, "ints", "x")
			c.SMembers(ctx, "ints")
			c.Set(ctx, "str", "x", 0)
			c.SAdd(ctx, "str", "a")
			c.SMembers(ctx, "str")
			c.SInter(ctx, "s", "str")
			c.SInter(ctx, "nosuch", "str")
			c.SUnionStore(ctx, "s", "str")
			c.SMove(ctx, "s", "str", "b")
			c.SMove(ctx, "str", "s", "b")
		}),

		Entry("sorted sets", func(ctx context.Context, c *redis.Client) {
			c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 0.1, Member: "c"})
			c.ZAddArgs(ctx, "z", redis.ZAddArgs{NX: true, Members: []redis.Z{{Score: 5, Member: "a"}, {Score: 5, Member: "d"}}})
			c.ZAddArgs(ctx, "z", redis.ZAddArgs{XX: true, Ch: true, Members: []redis.Z{{Score: 6, Member: "a"}, {Score: 6, Member: "e"}}})
			c.ZAddArgs(ctx, "z", redis.ZAddArgs{GT: true, Ch: true, Members: []redis.Z{{Score: 1, Member: "a"}, {Score: 7, Member: "b"}}})
			c.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{Members: []redis.Z{{Score: 1.5, Member: "c"}}})
			c.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{NX: true, Members: []redis.Z{{Score: 1.5, Member: "c"}}})
			c.Do(ctx, "ZADD", "z", "NX", "XX", "1", "x")
			c.Do(ctx, "ZADD", "z", "GT", "LT", "1", "x")
			c.Do(ctx, "ZADD", "z", "INCR", "1", "x", "2", "y")
			c.Do(ctx, "ZADD", "z", "nan", "x")
			c.Do(ctx, "ZADD", "z", "1")
			c.ZAdd(ctx, "z", redis.Z{Score: math.Inf(1), Member: "pinf"}, redis.Z{Score: math.Inf(-1), Member: "ninf"})
			c.Do(ctx, "ZADD", "z", "1e-5", "tiny", "123456789012345678", "huge", "-0", "negzero")
			c.Do(ctx, "ZSCORE", "z", "c")
			c.Do(ctx, "ZSCORE", "z", "pinf")
			c.Do(ctx, "ZSCORE", "z", "ninf")
			c.Do(ctx, "ZSCORE", "z", "tiny")
			c.Do(ctx, "ZSCORE", "z", "huge")
			c.Do(ctx, "ZSCORE", "z", "negzero")
			c.Do(ctx, "ZRANGE", "z", "0", "-1", "WITHSCORES")
			c.Do(ctx, "ZINCRBY", "z", "0.1", "c")
			c.Do(ctx, "ZINCRBY", "z", "-inf", "pinf")
			c.Do(ctx, "ZINCRBY", "z", "abc", "c")
			c.ZScore(ctx, "z", "nosuch")
			c.ZMScore(ctx, "z", "a", "nosuch", "pinf")
			c.ZCard(ctx, "z")
			c.ZCount(ctx, "z", "(1", "+inf")
			c.ZCount(ctx, "z", "x", "1")
			c.ZRank(ctx, "z", "b")
			c.ZRevRank(ctx, "z", "b")
			c.ZRank(ctx, "z", "nosuch")
			c.ZRangeWithScores(ctx, "z", 0, -1)
			c.ZRevRangeWithScores(ctx, "z", 0, 2)
			c.ZRangeByScore(ctx, "z", &redis.ZRangeBy{Min: "(0", Max: "6", Offset: 1, Count: 2})
			c.ZRevRangeByScoreWithScores(ctx, "z", &redis.ZRangeBy{Min: "-inf", Max: "+inf"})
			c.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: "z", Start: "(1", Stop: "+inf", ByScore: true, Rev: false})
			c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "z", Start: 2, Stop: 0, Rev: true})
			c.ZRangeStore(ctx, "zdst", redis.ZRangeArgs{Key: "z", Start: 0, Stop: 2})
			c.ZRangeWithScores(ctx, "zdst", 0, -1)
			c.Do(ctx, "ZRANGE", "z", "0", "1", "LIMIT", "0", "1")
			c.Do(ctx, "ZRANGE", "z", "a", "b", "BYLEX")
			c.ZAdd(ctx, "lex", redis.Z{Member: "a"}, redis.Z{Member: "b"}, redis.Z{Member: "c"}, redis.Z{Member: "d"})
			c.ZRangeByLex(ctx, "lex", &redis.ZRangeBy{Min: "[b", Max: "+"})
			c.ZRevRangeByLex(ctx, "lex", &redis.ZRangeBy{Min: "-", Max: "(c"})
			c.ZLexCount(ctx, "lex", "-", "+")
			c.ZRemRangeByLex(ctx, "lex", "[a", "[b")
			c.ZRemRangeByRank(ctx, "lex", 0, 0)
			c.ZRemRangeByScore(ctx, "z", "-inf", "(0")
			c.ZRem(ctx, "z", "a", "nosuch")
			c.ZAdd(ctx, "z2", redis.Z{Score: 10, Member: "b"}, redis.Z{Score: 3, Member: "x"})
			c.ZUnionStore(ctx, "u", &redis.ZStore{Keys: []string{"z", "z2"}, Weights: []float64{2, 1}, Aggregate: "MAX"})
			c.ZRangeWithScores(ctx, "u", 0, -1)
			c.ZInterStore(ctx, "in", &redis.ZStore{Keys: []string{"z", "z2"}})
			c.ZRangeWithScores(ctx, "in", 0, -1)
			c.ZUnionWithScores(ctx, redis.ZStore{Keys: []string{"z", "z2"}})
			c.ZInterWithScores(ctx, &redis.ZStore{Keys: []string{"z", "z2"}, Aggregate: "MIN"})
			c.ZDiffWithScores(ctx, "z", "z2")
			c.ZDiffStore(ctx, "df", "z", "z2")
			c.ZInterCard(ctx, 0, "z", "z2")
			c.SAdd(ctx, "aset", "b", "x")
			c.ZUnionWithScores(ctx, redis.ZStore{Keys: []string{"z2", "aset"}})
			c.Do(ctx, "ZUNIONSTORE", "u", "0", "z")
			c.Do(ctx, "ZUNIONSTORE", "u", "2", "z")
			c.Do(ctx, "ZINTERSTORE", "u", "1", "z", "WEIGHTS", "x")
			c.Do(ctx, "ZINTERSTORE", "u", "1", "z", "AGGREGATE", "avg")
			c.ZPopMin(ctx, "z", 2)
			c.ZPopMax(ctx, "z")
			c.ZPopMin(ctx, "nosuch")
			c.ZMPop(ctx, "min", 2, "nosuch", "z")
			c.ZMPop(ctx, "max", 100, "z2")
			c.ZMPop(ctx, "max", 1, "nosuch")
			c.Do(ctx, "ZMPOP", "1", "z", "MIDDLE")
			c.Do(ctx, "ZMPOP", "1", "z", "MIN", "COUNT", "0")
			c.BZPopMin(ctx, time.Second, "z")
			c.BZPopMax(ctx, time.Second, "z")
			c.BZMPop(ctx, time.Second, "max", 10, "nosuch", "z")
			c.Do(ctx, "BZPOPMIN", "z", "-1")
			c.Do(ctx, "BZPOPMIN", "z", "x")
			c.Do(ctx, "BZMPOP", "0.01", "1", "nosuch", "MIN")
			c.Do(ctx, "BZPOPMAX", "nosuch", "0.01")
			c.Set(ctx, "str", "x", 0)
			c.ZAdd(ctx, "str", redis.Z{Score: 1, Member: "a"})
			c.ZScore(ctx, "str", "a")
			c.ZRange(ctx, "str", 0, -1)
			c.ZUnionStore(ctx, "u", &redis.ZStore{Keys: []string{"str"}})
			c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"})
			c.Do(ctx, "ZRANGE", "z", "0", "-1", "WITHSCORES", "BYLEX")
			c.Do(ctx, "ZRANGEBYSCORE", "z", "(a", "1")
			c.Do(ctx, "ZRANGEBYLEX", "z", "a", "b")
			c.Do(ctx, "ZRANDMEMBER", "z", "1", "WITHSCORES", "x")
			c.ZRandMember(ctx, "z", 5)
		}),

		Entry("HyperLogLog", func(ctx context.Context, c *redis.Client) {
			c.PFAdd(ctx, "h1", "a", "b", "c")
			c.PFAdd(ctx, "h1", "a")
			c.PFAdd(ctx, "h1")
			c.PFAdd(ctx, "h0")
			c.PFCount(ctx, "h0")
			var many []interface{}
			for i := 0; i < 3000; i++ {
				many = append(many, i)
			}
			c.PFAdd(ctx, "h2", many...)
			c.PFCount(ctx, "h1")
			c.PFCount(ctx, "h2")
			c.PFCount(ctx, "h1", "h2", "nosuch")
			c.PFMerge(ctx, "m", "h1", "h2")
			c.PFCount(ctx, "m")
			c.PFMerge(ctx, "m2")
			c.Exists(ctx, "m2")
			c.Get(ctx, "h1")
			c.Set(ctx, "str", "not an hll", 0)
			c.PFAdd(ctx, "str", "a")
			c.PFCount(ctx, "str")
			c.PFMerge(ctx, "m", "str")
			c.LPush(ctx, "l", "x")
			c.PFCount(ctx, "l")
			c.Do(ctx, "PFADD")
			c.Do(ctx, "PFCOUNT")
		}),

		Entry("scripting: EVAL, EVALSHA, SCRIPT", func(ctx context.Context, c *redis.Client) {
			c.Eval(ctx, "return 1", nil)
			c.Eval(ctx, "return {1, 'two', {3, false}, true, nil, 5}", nil)
			c.Eval(ctx, "return 3.99", nil)
			c.Eval(ctx, "return {KEYS[1], ARGV[1], #KEYS, #ARGV}", []string{"k"}, "a", "b")
			c.Eval(ctx, "return redis.status_reply('FINE')", nil)
			c.Eval(ctx, "return redis.error_reply('MY err')", nil)
			c.Eval(ctx, "return {err='x'}", nil)
			c.Eval(ctx, "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])", []string{"s"}, "v")
			c.Eval(ctx, "return redis.call('incr', 's')", nil)
			c.Eval(ctx, "return redis.pcall('incr', 's')", nil)
			c.Eval(ctx, "return redis.call('nosuchcmd')", nil)
			c.Eval(ctx, "return redis.call('hgetall', 's')", nil)
			c.Eval(ctx, "return redis.call('zadd', 'z', '0.1', 'm') + 0, redis.call('zscore', 'z', 'm')", nil)
			c.Eval(ctx, "return redis.call('zrange', 'z', 0, -1, 'withscores')", nil)
			c.Eval(ctx, "return tostring(redis.call('hgetall', 'nosuch'))~=nil", nil)
			c.Eval(ctx, "redis.setresp(3); return redis.call('zscore', 'z', 'm')", nil)
			c.Eval(ctx, "redis.setresp(3); return {double=1.5}", nil)
			c.Eval(ctx, "redis.setresp(3); return redis.call('hgetall', 'h')", nil)
			c.Eval(ctx, "return {map={a=1}}", nil)
			c.Eval(ctx, "syntax error here", nil)
			c.Eval(ctx, "error('boom')", nil)
			c.Eval(ctx, "return redis.sha1hex('')", nil)
			c.Eval(ctx, "return cjson.encode({1,2})", nil)
			c.Eval(ctx, "return redis.call('get', KEYS[1])", []string{"nosuch"})
			c.Do(ctx, "EVAL", "return 1", "-1")
			c.Do(ctx, "EVAL", "return 1", "2", "a")
			c.Do(ctx, "EVAL", "return 1", "x")
			c.ScriptLoad(ctx, "return ARGV[1]..'!'")
			c.EvalSha(ctx, "a0a8b2a5e5b9b8c1e4f5d9e5b3c7b8d2e1f0a9b8", nil)
			c.EvalSha(ctx, "4ad3cdc3c32b4b5e1d6a0b8f2a2c6f5b9e7d1c0a", nil)
			c.ScriptExists(ctx, "4ad3cdc3c32b4b5e1d6a0b8f2a2c6f5b9e7d1c0a", "nosuch")
			c.EvalSha(ctx, "3a1d5e5fd7d8e1f5f7bb5e8e7c4a1f5e8b8f3b5a", nil, "x")
			sha := c.ScriptLoad(ctx, "return ARGV[1]..'!'").Val()
			c.EvalSha(ctx, sha, nil, "hi")
			c.EvalShaRO(ctx, sha, nil, "ro")
			c.EvalRO(ctx, "return redis.call('set', 'x', 'y')", nil)
			c.EvalRO(ctx, "return redis.call('get', 'x')", nil)
			c.ScriptExists(ctx, sha, strings.ToUpper(sha), "0000")
			c.ScriptFlush(ctx)
			c.ScriptExists(ctx, sha)
			c.EvalSha(ctx, sha, nil, "hi")
			c.ScriptLoad(ctx, "return (")
		}),

		Entry("scripting: compare-and-delete and compare-and-expire locks", func(ctx context.Context, c *redis.Client) {
			c.SetArgs(ctx, "lock", "tok1", redis.SetArgs{Mode: "NX", TTL: 30 * time.Second})
			c.SetArgs(ctx, "lock", "tok2", redis.SetArgs{Mode: "NX", TTL: 30 * time.Second})
			c.Eval(ctx, itCompareAndExpire, []string{"lock"}, "tok2", "60000")
			c.Eval(ctx, itCompareAndExpire, []string{"lock"}, "tok1", "60000")
			c.TTL(ctx, "lock")
			c.Eval(ctx, itCompareAndDelete, []string{"lock"}, "tok2")
			c.Get(ctx, "lock")
			c.Eval(ctx, itCompareAndDelete, []string{"lock"}, "tok1")
			c.Exists(ctx, "lock")
			c.Eval(ctx, itCompareAndDelete, []string{"lock"}, "tok1")
			c.Eval(ctx, itCompareAndExpire, []string{"lock"}, "tok1", "60000")
			sha := c.ScriptLoad(ctx, itCompareAndDelete).Val()
			c.Set(ctx, "lock", "tok3", 0)
			c.EvalSha(ctx, sha, []string{"lock"}, "tok3")
			c.HSet(ctx, "lock", "f", "v")
			c.Eval(ctx, itCompareAndDelete, []string{"lock"}, "tok3")
		}),

		Entry("scripting: Redisson reentrant lock on a hash with PEXPIRE", func(ctx context.Context, c *redis.Client) {
			keys := []string{"myLock", "redisson_lock__channel:{myLock}"}
			c.Eval(ctx, itRedissonTryLock, keys[:1], "30000", "uuid1:1")
			c.HGetAll(ctx, "myLock")
			c.TTL(ctx, "myLock")
			c.Eval(ctx, itRedissonTryLock, keys[:1], "30000", "uuid1:1")
			c.HGet(ctx, "myLock", "uuid1:1")
			r := c.Eval(ctx, itRedissonTryLock, keys[:1], "30000", "uuid2:1")
			// the holder's remaining PTTL: only its range is comparable
			Expect(r.Int64()).To(BeNumerically(">", 20000))
			c.Eval(ctx, itRedissonUnlock, keys, "0", "30000", "uuid2:1")
			c.Eval(ctx, itRedissonUnlock, keys, "0", "30000", "uuid1:1")
			c.HGet(ctx, "myLock", "uuid1:1")
			c.Eval(ctx, itRedissonUnlock, keys, "0", "30000", "uuid1:1")
			c.Exists(ctx, "myLock")
			c.Eval(ctx, itRedissonUnlock, keys, "0", "30000", "uuid1:1")
			c.Set(ctx, "myLock", "str", 0)
			c.Eval(ctx, itRedissonTryLock, keys[:1], "30000", "uuid1:1")
		}),

		Entry("TYPE, OBJECT ENCODING, COPY, RENAME, MOVE and SCAN TYPE for every type", func(ctx context.Context, c *redis.Client) {
			keysOfEveryType(ctx, c)
			for _, k := range everyTypeKey {
				c.Type(ctx, k)
				c.ObjectEncoding(ctx, k)
			}
			c.Type(ctx, "nosuch")
			c.ObjectEncoding(ctx, "nosuch")
			for _, t := range []string{"string", "list", "hash", "set", "zset", "stream", "nosuchtype"} {
				c.ScanType(ctx, 0, "", 1000, t)
			}
			c.ScanType(ctx, 0, "b*", 1000, "set")
			for _, k := range everyTypeKey {
				c.Copy(ctx, k, k+":copy", 0, false)
				c.Type(ctx, k+":copy")
				c.ObjectEncoding(ctx, k+":copy")
			}
			c.Copy(ctx, "list", "hash:copy", 0, false)
			c.Copy(ctx, "list", "hash:copy", 0, true)
			c.Type(ctx, "hash:copy")
			c.LRange(ctx, "hash:copy", 0, -1)
			c.Copy(ctx, "nosuch", "x", 0, false)
			c.Copy(ctx, "zset", "zset", 0, true)
			c.Copy(ctx, "set", "set", 1, false)
			c.Do(ctx, "COPY", "set", "x", "DB", "99")
			c.Do(ctx, "COPY", "set", "x", "FOO")
			c.PFCount(ctx, "hll:copy")
			c.ZRangeWithScores(ctx, "zset:copy", 0, -1)
			c.HGetAll(ctx, "hash:copy")
			c.SMembers(ctx, "set:copy")
			c.Rename(ctx, "list", "list2")
			c.Rename(ctx, "hash", "zset")
			c.Type(ctx, "zset")
			c.RenameNX(ctx, "set", "iset")
			c.RenameNX(ctx, "set", "set9")
			c.Rename(ctx, "nosuch", "x")
			c.Rename(ctx, "str", "str")
			c.Expire(ctx, "bigzset", time.Hour)
			c.Rename(ctx, "bigzset", "bz")
			c.TTL(ctx, "bz")
			c.Type(ctx, "bz")
			c.Move(ctx, "bz", 1)
			c.Move(ctx, "bz", 1)
			c.Move(ctx, "biglist", 0)
			c.Do(ctx, "MOVE", "biglist", "99")
			c.Do(ctx, "MOVE", "biglist", "x")
			c.Set(ctx, "bz", "x", 0)
			c.Copy(ctx, "bz", "bz", 1, false)
			c.Move(ctx, "bz", 1)
			c.Do(ctx, "SELECT", "1")
			c.Type(ctx, "bz")
			c.ObjectEncoding(ctx, "bz")
			c.ZCard(ctx, "bz")
			c.TTL(ctx, "bz")
			c.Do(ctx, "SELECT", "0")
			c.Do(ctx, "OBJECT", "ENCODING")
			c.Do(ctx, "OBJECT", "NOSUCH", "x")
		}),

		Entry("encodings as values grow and shrink", func(ctx context.Context, c *redis.Client) {
			c.Set(ctx, "s", strings.Repeat("a", 44), 0)
			c.ObjectEncoding(ctx, "s")
			c.Set(ctx, "s", strings.Repeat("a", 45), 0)
			c.ObjectEncoding(ctx, "s")
			c.Set(ctx, "s", "123", 0)
			c.Append(ctx, "s", "4")
			c.ObjectEncoding(ctx, "s")
			c.Set(ctx, "s", "-9223372036854775808", 0)
			c.ObjectEncoding(ctx, "s")
			c.Set(ctx, "s", "01", 0)
			c.ObjectEncoding(ctx, "s")
			c.SetRange(ctx, "s", 0, "x")
			c.ObjectEncoding(ctx, "s")
			c.IncrByFloat(ctx, "f", 1.5)
			c.ObjectEncoding(ctx, "f")
			c.HSet(ctx, "h", "f", strings.Repeat("v", 64))
			c.ObjectEncoding(ctx, "h")
			c.HSet(ctx, "h", "f", strings.Repeat("v", 65))
			c.ObjectEncoding(ctx, "h")
			c.HDel(ctx, "h", "f")
			c.HSet(ctx, "h", "g", "v")
			c.ObjectEncoding(ctx, "h")
			c.SAdd(ctx, "set", 1, 2)
			c.ObjectEncoding(ctx, "set")
			c.SAdd(ctx, "set", "x")
			c.ObjectEncoding(ctx, "set")
			c.SAdd(ctx, "set2", "9223372036854775808")
			c.ObjectEncoding(ctx, "set2")
			c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: strings.Repeat("m", 65)})
			c.ObjectEncoding(ctx, "z")
			c.ZAdd(ctx, "z2", redis.Z{Score: 1, Member: "a"})
			c.ZRangeStore(ctx, "z3", redis.ZRangeArgs{Key: "z", Start: 0, Stop: -1})
			c.ObjectEncoding(ctx, "z3")
			c.RPush(ctx, "l", strings.Repeat("x", 10000))
			c.ObjectEncoding(ctx, "l")
			c.Set(ctx, "h", "x", 0)
			c.PFAdd(ctx, "hll", "a")
			c.ObjectEncoding(ctx, "hll")
		}),
	)
})

// blockingScenario runs the two-client blocking scenarios against one
// server and returns what each client saw, in a deterministic order.
func blockingScenario(addr string, proto int) []string {
	GinkgoHelper()
	ctx := context.Background()
	mk := func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, DisableIdentity: true,
			MaxRetries: -1, PoolSize: 1, ReadTimeout: 5 * time.Second})
		DeferCleanup(c.Close)
		return c
	}
	ctl, a, b := mk(), mk(), mk()
	Expect(ctl.FlushAll(ctx).Err()).To(Succeed())
	var out []string
	var idA int64 // client IDs differ between servers: recorded as <A>
	note := func(who string, cmd redis.Cmder) {
		s := fmt.Sprintf("%s: %s", who, strings.TrimSpace(fmt.Sprint(cmd)))
		if cmd.Err() != nil {
			s = fmt.Sprintf("%s: %v err=%v", who, cmd.Args(), cmd.Err())
		}
		if idA != 0 {
			s = strings.ReplaceAll(s, fmt.Sprint(idA), "<A>")
		}
		out = append(out, s)
	}
	blocked := func(n int) {
		GinkgoHelper()
		Eventually(func() string {
			return ctl.Info(ctx, "clients").Val()
		}).WithTimeout(5 * time.Second).WithPolling(5 * time.Millisecond).
			Should(ContainSubstring(fmt.Sprintf("blocked_clients:%d\r", n)))
	}
	// start runs a blocking call on a client in the background.
	start := func(who string, c *redis.Client, do func(*redis.Client) redis.Cmder) chan redis.Cmder {
		ch := make(chan redis.Cmder, 1)
		go func() {
			defer GinkgoRecover()
			ch <- do(c)
		}()
		_ = who
		return ch
	}
	// served waits for one of the two waiters to be served and records
	// which one, then waits for the other if both are expected.
	take := func(who string, ch chan redis.Cmder) {
		GinkgoHelper()
		var cmd redis.Cmder
		Eventually(ch).WithTimeout(5 * time.Second).Should(Receive(&cmd))
		note(who, cmd)
	}
	which := func(n int, chA, chB chan redis.Cmder) {
		GinkgoHelper()
		blocked(n)
		Eventually(func() bool {
			select {
			case cmd := <-chA:
				note("A", cmd)
				return true
			case cmd := <-chB:
				note("B", cmd)
				return true
			default:
				return false
			}
		}).WithTimeout(5*time.Second).WithPolling(time.Millisecond).Should(BeTrue(), "a client was unblocked")
	}

	By("BLPOP: the longest waiter is served first, one element each")
	chA := start("A", a, func(c *redis.Client) redis.Cmder { return c.BLPop(ctx, 0, "l1", "l2") })
	blocked(1)
	chB := start("B", b, func(c *redis.Client) redis.Cmder { return c.BLPop(ctx, 0, "l2") })
	blocked(2)
	note("ctl", ctl.RPush(ctx, "l2", "x"))
	which(1, chA, chB)
	note("ctl", ctl.RPush(ctx, "l2", "y", "z"))
	which(0, chA, chB)
	note("ctl", ctl.LRange(ctx, "l2", 0, -1))

	By("BRPOP and BLMOVE waiters in arrival order; a push in MULTI serves both at EXEC")
	ctl.Del(ctx, "l2")
	chA = start("A", a, func(c *redis.Client) redis.Cmder { return c.BLMove(ctx, "src", "dst", "RIGHT", "LEFT", 0) })
	blocked(1)
	chB = start("B", b, func(c *redis.Client) redis.Cmder { return c.BRPop(ctx, 0, "src") })
	blocked(2)
	_, err := ctl.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, "src", "1", "2", "3")
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
	take("A", chA)
	take("B", chB)
	note("ctl", ctl.LRange(ctx, "src", 0, -1))
	note("ctl", ctl.LRange(ctx, "dst", 0, -1))

	By("BLMOVE into a list another client waits on serves it in turn")
	chA = start("A", a, func(c *redis.Client) redis.Cmder { return c.BLPop(ctx, 0, "chain") })
	blocked(1)
	chB = start("B", b, func(c *redis.Client) redis.Cmder { return c.BLMove(ctx, "in", "chain", "LEFT", "LEFT", 0) })
	blocked(2)
	note("ctl", ctl.LPush(ctx, "in", "v"))
	take("B", chB)
	take("A", chA)
	note("ctl", ctl.Exists(ctx, "in", "chain"))

	By("BLMPOP with COUNT and BZMPOP / BZPOPMIN")
	chA = start("A", a, func(c *redis.Client) redis.Cmder { return c.BLMPop(ctx, 0, "right", 2, "m1", "m2") })
	blocked(1)
	chB = start("B", b, func(c *redis.Client) redis.Cmder { return c.BZPopMin(ctx, 0, "z1") })
	blocked(2)
	note("ctl", ctl.RPush(ctx, "m2", "a", "b", "c"))
	which(1, chA, chB)
	note("ctl", ctl.ZAdd(ctx, "z1", redis.Z{Score: 0.1, Member: "x"}, redis.Z{Score: math.Inf(-1), Member: "y"}))
	which(0, chA, chB)
	note("ctl", ctl.ZRangeWithScores(ctx, "z1", 0, -1))
	chA = start("A", a, func(c *redis.Client) redis.Cmder { return c.BZMPop(ctx, 0, "max", 5, "z3", "z2") })
	blocked(1)
	note("ctl", ctl.ZAdd(ctx, "z2", redis.Z{Score: math.Inf(1), Member: "p"}, redis.Z{Score: 2, Member: "q"}))
	take("A", chA)

	By("timeouts, fractional ones included")
	note("A", a.Do(ctx, "BLPOP", "nosuch", "0.01"))
	note("A", a.Do(ctx, "BRPOP", "nosuch", "0.05"))
	note("A", a.Do(ctx, "BLMOVE", "nosuch", "d", "LEFT", "LEFT", ".01"))
	note("A", a.Do(ctx, "BLMPOP", "0.01", "1", "nosuch", "LEFT"))
	note("A", a.Do(ctx, "BZPOPMIN", "nosuch", "0.01"))
	note("A", a.Do(ctx, "BZMPOP", "0.01", "1", "nosuch", "MIN"))
	note("A", a.Do(ctx, "BLPOP", "nosuch", "-0.5"))
	note("A", a.Do(ctx, "BLPOP", "nosuch", "1e400"))
	note("A", a.Do(ctx, "BLPOP", "nosuch", "inf"))

	By("CLIENT UNBLOCK, with TIMEOUT and with ERROR")
	idA = a.ClientID(ctx).Val()
	chA = start("A", a, func(c *redis.Client) redis.Cmder { return c.BLPop(ctx, 0, "nosuch") })
	blocked(1)
	note("ctl", ctl.ClientUnblock(ctx, idA))
	take("A", chA)
	note("ctl", ctl.ClientUnblock(ctx, idA))
	chA = start("A", a, func(c *redis.Client) redis.Cmder { return c.BZPopMax(ctx, 0, "nosuch") })
	blocked(1)
	note("ctl", ctl.ClientUnblockWithError(ctx, idA))
	take("A", chA)
	note("ctl", ctl.Do(ctx, "CLIENT", "UNBLOCK", "abc"))
	note("ctl", ctl.Do(ctx, "CLIENT", "UNBLOCK", fmt.Sprint(idA), "MAYBE"))
	blocked(0)
	return out
}

var _ = Describe("Blocking list and sorted set commands with two clients against redis-server 7.0", Label("interop"), func() {
	It("serve the longest waiter first, time out and unblock as redis-server does", func() {
		oracle := startRealRedis()
		vigil := StartServer().Addr()
		for _, proto := range []int{2, 3} {
			want := blockingScenario(oracle, proto)
			got := blockingScenario(vigil, proto)
			for i := 0; i < len(got) && i < len(want); i++ {
				Expect(got[i]).To(Equal(want[i]), "protocol %d, step %d", proto, i)
			}
			Expect(got).To(HaveLen(len(want)))
		}
	})
})
