package redisutil

// String2ll is util.c's string2ll, the strict integer parser behind
// getLongLongFromObject, the protocol's *<count> and $<len> headers and the
// integer encodings: an optional '-', then base-10 digits with no leading
// zero ("0" alone is 0; "-0", "+1", " 1", "01" and "" are refused), at most
// 20 bytes, in int64 range. It takes a string or a []byte without copying.
func String2ll[S string | []byte](s S) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	i := 0
	neg := s[0] == '-'
	if neg {
		i = 1
		if len(s) == 1 {
			return 0, false
		}
	}
	if s[i] < '1' || s[i] > '9' {
		return 0, false
	}
	var n uint64
	for ; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}
