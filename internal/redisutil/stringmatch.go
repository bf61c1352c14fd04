package redisutil

// globMaxNesting is stringmatchlen_impl's protection against abusive
// patterns: deeper recursion (one level per '*') fails the match.
const globMaxNesting = 1000

// StringMatch reports whether s matches the glob pattern, an exact port of
// Redis 7.0's util.c stringmatchlen (KEYS, SCAN MATCH, PSUBSCRIBE, CONFIG
// GET, ACL key and channel patterns, SENTINEL commands):
//
//	'*'      any sequence, including empty
//	'?'      any one byte
//	[abc]    one of the bytes; [^abc] none of them; [a-z] a range (either
//	         order); \x inside brackets is a literal x
//	\x       a literal x
//
// with Redis's edge cases kept byte for byte: an unterminated "[" runs to
// the end of the pattern, "[]" matches nothing, "[a-]" takes the "]" as the
// end of a range, range bounds compare as C's signed char, and nocase folds
// ASCII letters only. Matching is bounded like Redis's: after a '*' fails
// at every position no longer match is tried (skipLongerMatches), and
// patterns nesting more than 1000 '*' fail. pattern and s may each be a
// string or a []byte; nothing is copied.
func StringMatch[P, S string | []byte](pattern P, s S, nocase bool) bool {
	skip := false
	return globMatch(pattern, s, nocase, &skip, 0)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// globMatch is stringmatchlen_impl. pattern is read through at(), which
// yields 0 past the end as C's NUL terminator does, so the edge cases where
// Redis reads the terminator behave identically.
func globMatch[P, S string | []byte](pattern P, str S, nocase bool, skipLonger *bool, nesting int) bool {
	if nesting > globMaxNesting {
		return false
	}
	at := func(i int) byte {
		if i < len(pattern) {
			return pattern[i]
		}
		return 0
	}
	p, plen := 0, len(pattern) // position and remaining length of pattern
	s, slen := 0, len(str)
	for plen > 0 && slen > 0 {
		switch at(p) {
		case '*':
			for plen > 0 && at(p+1) == '*' {
				p++
				plen--
			}
			if plen == 1 {
				return true
			}
			for slen > 0 {
				if globMatch(pattern[p+1:], str[s:], nocase, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				s++
				slen--
			}
			// No match for the rest of the pattern from anywhere in the
			// rest of the string: longer matches of earlier '*' cannot
			// help either.
			*skipLonger = true
			return false
		case '?':
			s++
			slen--
		case '[':
			p++
			plen--
			not := at(p) == '^'
			if not {
				p++
				plen--
			}
			match := false
			c := str[s]
			for {
				if at(p) == '\\' && plen >= 2 {
					p++
					plen--
					if at(p) == c {
						match = true
					}
				} else if at(p) == ']' {
					break
				} else if plen == 0 {
					p--
					plen++
					break
				} else if plen >= 3 && at(p+1) == '-' {
					// C compares plain chars, signed on x86.
					start, end, cc := int(int8(at(p))), int(int8(at(p+2))), int(int8(c))
					if start > end {
						start, end = end, start
					}
					if nocase {
						start, end, cc = lowerInt(start), lowerInt(end), lowerInt(cc)
					}
					p += 2
					plen -= 2
					if cc >= start && cc <= end {
						match = true
					}
				} else if at(p) == c || (nocase && lower(at(p)) == lower(c)) {
					match = true
				}
				p++
				plen--
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s++
			slen--
		case '\\':
			if plen >= 2 {
				p++
				plen--
			}
			fallthrough
		default:
			if at(p) != str[s] && (!nocase || lower(at(p)) != lower(str[s])) {
				return false
			}
			s++
			slen--
		}
		p++
		plen--
		if slen == 0 {
			for at(p) == '*' {
				p++
				plen--
			}
			break
		}
	}
	return plen == 0 && slen == 0
}

func lowerInt(c int) int {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}
