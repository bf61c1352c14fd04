// Package geo is Redis 7.0.15's geohash arithmetic (geohash.c,
// geohash_helper.c and the pure parts of geo.c): the 52-bit interleaved
// scores GEOADD stores in a sorted set, their decoding, the 8 neighbours of
// a cell, the 9 cells covering a radius or box search, the haversine
// distance, the 11-character GEOHASH string and pqsort.c's partial sort,
// which decides the order of equidistant results under COUNT.
//
// Everything here is pure and deterministic. Floating point follows the C
// code step by step (the same operations in the same order, C's
// conversions emulated), and sin, cos and asin are correctly rounded,
// which is what glibc returns for all but about one input in two thousand.
//
// It imports the standard library only.
package geo
