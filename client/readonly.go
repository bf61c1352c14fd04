package client

import "strings"

// readOnly is the set of commands the client treats as idempotent reads:
// they are retried automatically after a failover and may be routed to a
// replica (ReadFrom). It is the subset of Redis 7.0's "readonly" commands
// that only read keys (no blocking reads, no scripts: EVAL_RO and FCALL_RO
// are read-only for Redis but their cost is the caller's to judge).
var readOnly = map[string]bool{}

func init() {
	for _, name := range strings.Fields(`
		get mget getrange strlen substr exists type ttl pttl expiretime pexpiretime
		dbsize randomkey keys scan dump object touch lcs
		hget hmget hgetall hkeys hvals hlen hexists hstrlen hrandfield hscan
		lindex llen lrange lpos
		scard sismember smismember smembers srandmember sunion sinter sintercard sdiff sscan
		zcard zcount zlexcount zrange zrangebyscore zrangebylex zrevrange zrevrangebyscore
		zrevrangebylex zrank zrevrank zscore zmscore zrandmember zunion zinter zintercard zdiff zscan
		getbit bitcount bitpos bitfield_ro
		pfcount
		geopos geodist geohash georadius_ro georadiusbymember_ro geosearch
		xrange xrevrange xlen xread xinfo
		ping echo time
	`) {
		readOnly[name] = true
	}
}

// ReadOnlyCommand reports whether the client treats the command (lower or
// upper case) as an idempotent read: retried without Options.RetryWrites
// and routed by Options.ReadFrom. XREAD counts only without BLOCK (a
// blocking read is left on the master and is not retried).
func ReadOnlyCommand(args []interface{}) bool {
	if len(args) == 0 {
		return false
	}
	name, ok := args[0].(string)
	if !ok {
		return false
	}
	name = strings.ToLower(name)
	if !readOnly[name] {
		return false
	}
	if name == "xread" {
		for _, a := range args[1:] {
			if s, ok := a.(string); ok && strings.EqualFold(s, "block") {
				return false
			}
		}
	}
	return true
}
