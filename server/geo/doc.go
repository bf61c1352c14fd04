// Package geo is Redis 7.0.15's geohash arithmetic (geohash.c,
// geohash_helper.c and the pure parts of geo.c): the 52-bit interleaved
// scores GEOADD stores in a sorted set, their decoding, the 8 neighbours of
// a cell, the 9 cells covering a radius or box search, the haversine
// distance, the 11-character GEOHASH string and pqsort.c's partial sort,
// which decides the order of equidistant results under COUNT.
//
// Everything here is pure and deterministic. Floating point follows the C
// code step by step (the same operations in the same order, C's
// conversions emulated), and sin, cos and asin are correctly rounded (a fast
// evaluation with a rounding test, the double-double reference when it
// cannot decide: fastmath.go).
// glibc's are not always (about one cos in a thousand is an ulp off), so a
// distance can differ from Redis's in its last bit: invisible in WITHDIST's
// 4 decimals, visible in the 17 digits of a STOREDIST score. Where the bits
// show (STOREDIST) or decide (a point within a few ulps of a search's edge),
// SystemDistance evaluates the formula in C with the system's libm, as
// redis-server does (libm_cgo.go; a build without cgo falls back to the
// correctly rounded functions).
//
// It imports the standard library only (and, with cgo, the C library).
package geo
