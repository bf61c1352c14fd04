package server

// Redis 7.0 error replies of the hash commands (t_hash.c); the shared ones
// are in errors.go.
const (
	ErrHashNotInteger = "ERR hash value is not an integer"
	ErrHashNotFloat   = "ERR hash value is not a float"
	ErrHashNaNIncr    = "ERR value is NaN or Infinity"
	// ErrOutOfRange is HRANDFIELD's reply to a WITHVALUES count whose
	// doubled reply length would overflow.
	ErrOutOfRange = "ERR value is out of range"
	// ErrLongRange is getRangeLongFromObjectOrReply's reply for the range
	// -LONG_MAX..LONG_MAX (HRANDFIELD's count).
	ErrLongRange = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
)
