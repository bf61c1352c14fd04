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
	dst, _ = r.PeekArgs(dst, nil)
	return dst
}

// PeekArgs is PeekKeys that also appends to subs (when it is not nil: up
// to the same count) each of those commands' third argument (a hash's
// field, a set's member), nil for a command without one or for a script
// call. keys[i] and subs[i] are the same command's.
func (r *Reader) PeekArgs(keys, subs [][]byte) ([][]byte, [][]byte) {
	if r.inMulti || r.mode != ModeClient {
		return keys, subs
	}
	b := r.buf[:r.w]
	p := r.r
	for len(keys) < cap(keys) && (subs == nil || len(subs) < cap(subs)) && p < len(b) && b[p] == '*' {
		argc, q, ok := peekInt(b, p+1)
		if !ok || argc < 2 || argc > 1024 {
			return keys, subs
		}
		p = q
		var name, key, nkeys, key3 []byte
		for i := int64(0); i < argc; i++ {
			if p >= len(b) || b[p] != '$' {
				return keys, subs
			}
			n, q, ok := peekInt(b, p+1)
			if !ok || n < 0 || n > int64(len(b)-q)-2 {
				return keys, subs
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
		sub := nkeys
		if nkeys != nil && scriptCall(name) {
			sub = nil
			if key3 != nil && string(nkeys) != "0" {
				key = key3 // EVAL/EVALSHA/FCALL script numkeys key...: the first key
			}
		}
		keys = append(keys, key)
		if subs != nil {
			subs = append(subs, sub)
		}
	}
	return keys, subs
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
