package redisutil

// AppendRepr appends s as sds.c sdscatrepr writes it: double-quoted, with
// \\ \" \n \r \t \a \b escaped and other bytes outside 0x20-0x7e as \xHH
// (lowercase hex). SplitArgs reads the result back as s. MONITOR, CONFIG
// REWRITE, the AOF manifest and the sentinel's config file use it.
func AppendRepr[S string | []byte](b []byte, s S) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if c >= 0x20 && c <= 0x7e {
				b = append(b, c)
			} else {
				b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			}
		}
	}
	return append(b, '"')
}

// Quote is AppendRepr of s as a string.
func Quote(s string) string { return string(AppendRepr(make([]byte, 0, len(s)+2), s)) }
