package resp

// PeekKeys appends to dst, up to cap(dst), the second argument (the first
// key of most commands; the fourth for EVAL, EVALSHA and FCALL with keys)
// of each complete multibulk command buffered after
// the one the reader is at, without consuming anything. The slices alias
// the buffer until the next Fill or Feed. It stops at the first command
// that is incomplete, inline, malformed or has fewer than two arguments
// (the parser proper reports what is wrong with it). The server uses it to
// load, before running a pipelined batch, the memory its lookups will
// touch, so that their cache misses overlap instead of following each
// other.
func (r *Reader) PeekKeys(dst [][]byte) [][]byte {
	if r.inMulti || r.mode != ModeClient {
		return dst
	}
	b := r.buf[:r.w]
	p := r.r
	for len(dst) < cap(dst) && p < len(b) && b[p] == '*' {
		argc, q, ok := peekInt(b, p+1)
		if !ok || argc < 2 || argc > 1024 {
			return dst
		}
		p = q
		var name, key, nkeys, key3 []byte
		for i := int64(0); i < argc; i++ {
			if p >= len(b) || b[p] != '$' {
				return dst
			}
			n, q, ok := peekInt(b, p+1)
			if !ok || n < 0 || n > int64(len(b)-q)-2 {
				return dst
			}
			arg := b[q : q+int(n) : q+int(n)]
			switch i {
			case 0:
				name = arg
			case 1:
				key = arg
			case 2:
				nkeys = arg
			case 3:
				key3 = arg
			}
			p = q + int(n) + 2
		}
		if key3 != nil && scriptCall(name) && string(nkeys) != "0" {
			key = key3 // EVAL/EVALSHA/FCALL script numkeys key...: the first key
		}
		dst = append(dst, key)
	}
	return dst
}

// scriptCall reports whether name is EVAL, EVALSHA, FCALL or their _RO
// forms (any case), whose first key is the fourth argument.
func scriptCall(name []byte) bool {
	switch len(name) {
	case 4, 5, 7, 8, 10:
	default:
		return false
	}
	var lower [10]byte
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	switch string(lower[:len(name)]) {
	case "eval", "evalsha", "fcall", "eval_ro", "fcall_ro", "evalsha_ro":
		return true
	}
	return false
}

// peekInt reads a non-negative decimal ended by CRLF at b[p:]: the number
// and the index after the CRLF.
func peekInt(b []byte, p int) (int64, int, bool) {
	var n int64
	start := p
	for p < len(b) && b[p] >= '0' && b[p] <= '9' {
		if p-start >= 18 {
			return 0, 0, false
		}
		n = n*10 + int64(b[p]-'0')
		p++
	}
	if p == start || p+1 >= len(b) || b[p] != '\r' || b[p+1] != '\n' {
		return 0, 0, false
	}
	return n, p + 2, true
}
