package lua

import (
	"math"
	"strconv"
)

// FormatNumber is Lua 5.1's LUA_NUMBER_FMT, "%.14g" (C's spelling of
// infinities and NaN): how Lua turns a number into a string.
func FormatNumber(f float64) string { return formatG(f, 14) }

// formatG is C's printf("%.<prec>g"), infinities and NaN spelled as C does.
func formatG(f float64, prec int) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		// glibc spells a NaN with its sign bit set (0/0's on x86) "-nan"
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', prec, 64)
}
