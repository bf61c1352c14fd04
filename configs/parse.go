package configs

import (
	"math"
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// strtoll is C's strtoll(s, &end, base) for base 8 or 10: leading isspace,
// an optional sign, then digits. It returns the value (saturated on
// overflow, as strtoll does), the unparsed rest (all of s when no digit was
// read) and whether it overflowed (errno ERANGE).
func strtoll(s string, base int) (v int64, rest string, overflow bool) {
	i := 0
	for i < len(s) && redisutil.IsSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var u uint64
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	for i < len(s) {
		c := s[i]
		if c < '0' || c > '9' || int(c-'0') >= base {
			break
		}
		if !overflow {
			u = u*uint64(base) + uint64(c-'0')
			if u > limit {
				overflow = true
			}
		}
		i++
	}
	if i == start {
		return 0, s, false
	}
	switch {
	case overflow && neg:
		return math.MinInt64, s[i:], true
	case overflow:
		return math.MaxInt64, s[i:], true
	case neg:
		return int64(-u), s[i:], false
	}
	return int64(u), s[i:], false
}

// Memtoull is memtoull for the server's commands that take a memory
// argument (DEBUG QUICKLIST-PACKED-THRESHOLD).
func Memtoull(s string) (uint64, bool) { return memtoull(s) }

// memtoull is Redis's util.c memtoull: digits followed by an optional unit
// (b, k=1000, kb=1024, m, mb, g, gb, case-insensitive). As in C, a missing
// number is 0 ("" and "mb" parse), a number too large saturates at
// 2^64-1 and the multiplication wraps.
func memtoull(s string) (uint64, bool) {
	if strings.HasPrefix(s, "-") {
		return 0, false
	}
	u := 0
	for u < len(s) && s[u] >= '0' && s[u] <= '9' {
		u++
	}
	var mul uint64
	switch strings.ToLower(s[u:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	if u >= 128 { // the digits must fit Redis's buffer
		return 0, false
	}
	var v uint64
	for i := 0; i < u; i++ {
		d := uint64(s[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			v = math.MaxUint64 // strtoull: ERANGE, not checked by Redis
			break
		}
		v = v*10 + d
	}
	return v * mul, true
}

// formatMemory is rewriteConfigFormatMemory: the largest of gb, mb, kb that
// divides the value exactly, else plain bytes.
func formatMemory(v int64) string {
	const kb, mb, gb = 1024, 1024 * 1024, 1024 * 1024 * 1024
	switch {
	case v != 0 && v%gb == 0:
		return strconv.FormatInt(v/gb, 10) + "gb"
	case v != 0 && v%mb == 0:
		return strconv.FormatInt(v/mb, 10) + "mb"
	case v != 0 && v%kb == 0:
		return strconv.FormatInt(v/kb, 10) + "kb"
	}
	return strconv.FormatInt(v, 10)
}

// string2d is Redis's util.c string2d: strtod over the whole string, no
// leading space, no NaN, no overflow to infinity.
func string2d(s string) (float64, bool) {
	if s == "" || redisutil.IsSpace(s[0]) {
		return 0, false
	}
	if strings.ContainsRune(s, '_') { // Go-only syntax
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// formatDouble is sprintf("%f") followed by Redis's trimDoubleString.
func formatDouble(f float64) string {
	s := strconv.FormatFloat(f, 'f', 6, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// splitSpaces is sdssplitlen(s, " "): CONFIG SET splits the value of a
// multi-argument directive on every single space, so "a  b" has an empty
// middle argument and "" has no argument at all.
func splitSpaces(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, " ")
}

// isBaseName is Redis's pathIsBaseName: no '/' and no '\'.
func isBaseName(s string) bool { return !strings.ContainsAny(s, `/\`) }
