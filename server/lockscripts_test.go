package server

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The lock scripts users copy from blogs and client libraries, verbatim:
// compare-and-delete and compare-and-expire (the Redis documentation's
// single-instance lock), and Redisson's reentrant lock on a hash with
// PEXPIRE (RedissonLock's tryLockInnerAsync and unlockInnerAsync).
const (
	lockCompareAndDelete = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`
	lockCompareAndExpire = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("pexpire",KEYS[1],ARGV[2]) else return 0 end`
	redissonTryLock      = `if (redis.call('exists', KEYS[1]) == 0) then ` +
		`redis.call('hincrby', KEYS[1], ARGV[2], 1); ` +
		`redis.call('pexpire', KEYS[1], ARGV[1]); ` +
		`return nil; ` +
		`end; ` +
		`if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then ` +
		`redis.call('hincrby', KEYS[1], ARGV[2], 1); ` +
		`redis.call('pexpire', KEYS[1], ARGV[1]); ` +
		`return nil; ` +
		`end; ` +
		`return redis.call('pttl', KEYS[1]);`
	redissonUnlock = `if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then ` +
		`return nil;` +
		`end; ` +
		`local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); ` +
		`if (counter > 0) then ` +
		`redis.call('pexpire', KEYS[1], ARGV[2]); ` +
		`return 0; ` +
		`else ` +
		`redis.call('del', KEYS[1]); ` +
		`redis.call('publish', KEYS[2], ARGV[1]); ` +
		`return 1; ` +
		`end; ` +
		`return nil;`
)

// TestLockScripts (interop) runs the lock scripts on Vigil and on
// redis-server 7.0.15 with the same arguments and compares every reply
// (PTTL within a second: the clocks differ) and the propagated streams.
func TestLockScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial, aof := startRedisAOF(t)
	rc, rbr := dial(2)
	ts := newTestServer(t)
	ts.clk.Advance(time.Until(ts.clk.Now()) * -1) // the real time, as Redis's
	vc := ts.client()
	mark := aof.begin(t, ts, rc, rbr, vc)
	steps := []struct {
		args []string
		want string // Vigil's reply; Redis's must match (PTTL loosely)
	}{
		{[]string{"SET", "lock", "tok1", "NX", "PX", "30000"}, "+OK\r\n"},
		{[]string{"SET", "lock", "tok2", "NX", "PX", "30000"}, "$-1\r\n"},
		{[]string{"EVAL", lockCompareAndExpire, "1", "lock", "tok2", "60000"}, ":0\r\n"},
		{[]string{"EVAL", lockCompareAndExpire, "1", "lock", "tok1", "60000"}, ":1\r\n"},
		{[]string{"EVAL", lockCompareAndDelete, "1", "lock", "tok2"}, ":0\r\n"},
		{[]string{"EVAL", lockCompareAndDelete, "1", "lock", "tok1"}, ":1\r\n"},
		{[]string{"EXISTS", "lock"}, ":0\r\n"},
		{[]string{"EVAL", redissonTryLock, "1", "rlock", "30000", "id1:1"}, "$-1\r\n"},
		{[]string{"EVAL", redissonTryLock, "1", "rlock", "30000", "id1:1"}, "$-1\r\n"},
		{[]string{"HGET", "rlock", "id1:1"}, "$1\r\n2\r\n"},
		{[]string{"EVAL", redissonTryLock, "1", "rlock", "30000", "id2:1"}, ":30000\r\n"},
		{[]string{"EVAL", redissonUnlock, "2", "rlock", "chan", "0", "30000", "id2:1"}, "$-1\r\n"},
		{[]string{"EVAL", redissonUnlock, "2", "rlock", "chan", "0", "30000", "id1:1"}, ":0\r\n"},
		{[]string{"EVAL", redissonUnlock, "2", "rlock", "chan", "0", "30000", "id1:1"}, ":1\r\n"},
		{[]string{"EXISTS", "rlock"}, ":0\r\n"},
		{[]string{"EVAL", redissonTryLock, "1", "rlock", "30000", "id2:1"}, "$-1\r\n"},
	}
	var history []string
	for i, st := range steps {
		history = append(history, strings.Join(st.args[:1], " "))
		got := ts.do(vc, st.args...)
		want := rawDo(t, rc, rbr, st.args...)
		if got != st.want {
			t.Fatalf("step %d %q: vigil %q, want %q", i, st.args[0], got, st.want)
		}
		if got != want && !pttlClose(got, want) {
			t.Fatalf("step %d %q: vigil %q, redis %q", i, st.args[0], got, want)
		}
	}
	aof.check(t, ts, mark, history)
}

// pttlClose accepts two integer replies within a second of each other.
func pttlClose(a, b string) bool {
	if !strings.HasPrefix(a, ":") || !strings.HasPrefix(b, ":") {
		return false
	}
	x, err1 := strconv.ParseInt(strings.TrimSpace(a[1:]), 10, 64)
	y, err2 := strconv.ParseInt(strings.TrimSpace(b[1:]), 10, 64)
	return err1 == nil && err2 == nil && x-y < 1000 && y-x < 1000
}
