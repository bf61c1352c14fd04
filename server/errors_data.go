package server

// Redis 7.0 error replies of the string and generic keyspace commands
// (t_string.c, db.c, expire.c, object.c); the shared ones are in errors.go.
const (
	ErrIntRange             = "ERR value is out of range, value must between -2147483648 and 2147483647"
	ErrDecrOverflow         = "ERR decrement would overflow"
	ErrInvalidCursor        = "ERR invalid cursor"
	ErrExpireNXIncompatible = "ERR NX and XX, GT or LT options at the same time are not compatible"
	ErrExpireGTLT           = "ERR GT and LT options at the same time are not compatible"
	ErrLCSWrongType         = "ERR The specified keys must contain string values"
	ErrLCSLenAndIdx         = "ERR If you want both the length and indexes, please just use IDX."
	ErrLCSTooLong           = "ERR String too long for LCS"
	ErrLCSMemory            = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
	ErrLFUNotSelected       = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	ErrLFUSelected          = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
)

// errUnsupportedOption is expire.c's reply to an unknown EXPIRE option.
func errUnsupportedOption(opt []byte) string { return "ERR Unsupported option " + string(opt) }

// errInvalidExpire is addReplyErrorExpireTime for a command.
func errInvalidExpire(fullname string) string {
	return "ERR invalid expire time in '" + fullname + "' command"
}
