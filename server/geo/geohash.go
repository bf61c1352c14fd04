package geo

import "math"

// Limits of the indexable area (EPSG:900913 / EPSG:3785 / OSGEO:41001).
const (
	LongMin = -180.0
	LongMax = 180.0
	LatMin  = -85.05112878
	LatMax  = 85.05112878
	// StepMax is GEO_STEP_MAX: 26 bits of longitude and 26 of latitude.
	StepMax = 26
)

// Bits is GeoHashBits: a hash of 2*Step bits.
type Bits struct {
	Bits uint64
	Step uint8
}

// IsZero is HASHISZERO.
func (h Bits) IsZero() bool { return h.Bits == 0 && h.Step == 0 }

// Range is GeoHashRange.
type Range struct{ Min, Max float64 }

func (r Range) isZero() bool { return r.Min == 0 && r.Max == 0 }

// Area is GeoHashArea: a cell and its bounds.
type Area struct {
	Hash                Bits
	Longitude, Latitude Range
}

// Neighbors is GeoHashNeighbors.
type Neighbors struct {
	North, East, West, South                   Bits
	NorthEast, SouthEast, NorthWest, SouthWest Bits
}

// WGS84 ranges of geohashGetCoordRange.
var (
	longRangeWGS84 = Range{LongMin, LongMax}
	latRangeWGS84  = Range{LatMin, LatMax}
)

func interleave64(xlo, ylo uint32) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF}
	s := [...]uint{1, 2, 4, 8, 16}
	x, y := uint64(xlo), uint64(ylo)
	for i := 4; i >= 0; i-- {
		x = (x | (x << s[i])) & b[i]
		y = (y | (y << s[i])) & b[i]
	}
	return x | (y << 1)
}

func deinterleave64(interleaved uint64) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF}
	s := [...]uint{0, 1, 2, 4, 8, 16}
	x := interleaved
	y := interleaved >> 1
	for i := 0; i < 6; i++ {
		x = (x | (x >> s[i])) & b[i]
		y = (y | (y >> s[i])) & b[i]
	}
	return x | (y << 32)
}

// cUint32 is C's (uint32_t) conversion of a double, as x86-64 code
// compiles it (cvttsd2si to 64 bits, then the low 32 bits).
func cUint32(f float64) uint32 { return uint32(cvttsd2si(f)) }

// cvttsd2si is x86's truncating conversion: out of range and NaN give
// the "integer indefinite" 1<<63.
func cvttsd2si(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// CUint64 is C's (uint64_t) conversion of a double as gcc compiles it on
// x86-64: values below 2^63 (and NaN) through the signed conversion, the
// others offset by 2^63.
func CUint64(f float64) uint64 {
	if !(f >= 9223372036854775808.0) {
		return uint64(cvttsd2si(f))
	}
	return uint64(cvttsd2si(f-9223372036854775808.0)) ^ (1 << 63)
}

// Encode is geohashEncode.
func Encode(longRange, latRange Range, longitude, latitude float64, step uint8) (Bits, bool) {
	if step > 32 || step == 0 || latRange.isZero() || longRange.isZero() {
		return Bits{}, false
	}
	if longitude > LongMax || longitude < LongMin || latitude > LatMax || latitude < LatMin {
		return Bits{}, false
	}
	if latitude < latRange.Min || latitude > latRange.Max || longitude < longRange.Min || longitude > longRange.Max {
		return Bits{Step: step}, false
	}
	latOffset := (latitude - latRange.Min) / (latRange.Max - latRange.Min)
	longOffset := (longitude - longRange.Min) / (longRange.Max - longRange.Min)
	latOffset *= float64(uint64(1) << step)
	longOffset *= float64(uint64(1) << step)
	return Bits{Bits: interleave64(cUint32(latOffset), cUint32(longOffset)), Step: step}, true
}

// EncodeWGS84 is geohashEncodeWGS84.
func EncodeWGS84(longitude, latitude float64, step uint8) (Bits, bool) {
	return Encode(longRangeWGS84, latRangeWGS84, longitude, latitude, step)
}

// Decode is geohashDecode.
func Decode(longRange, latRange Range, h Bits) (Area, bool) {
	if h.IsZero() || latRange.isZero() || longRange.isZero() {
		return Area{}, false
	}
	sep := deinterleave64(h.Bits)
	latScale := latRange.Max - latRange.Min
	longScale := longRange.Max - longRange.Min
	ilato := uint32(sep)
	ilono := uint32(sep >> 32)
	div := float64(uint64(1) << h.Step)
	var a Area
	a.Hash = h
	a.Latitude.Min = latRange.Min + float64((float64(ilato)*1.0/div)*latScale)
	a.Latitude.Max = latRange.Min + float64((float64(ilato+1)*1.0/div)*latScale)
	a.Longitude.Min = longRange.Min + float64((float64(ilono)*1.0/div)*longScale)
	a.Longitude.Max = longRange.Min + float64((float64(ilono+1)*1.0/div)*longScale)
	return a, true
}

// DecodeWGS84 is geohashDecodeWGS84.
func DecodeWGS84(h Bits) (Area, bool) { return Decode(longRangeWGS84, latRangeWGS84, h) }

// center is geohashDecodeAreaToLongLat: the middle of the cell, clamped to
// the indexable area.
func (a *Area) center() (float64, float64) {
	// C's comparisons (math.Min and math.Max are calls, and differ only
	// on -0 and NaN, which compare the same here).
	lon := (a.Longitude.Min + a.Longitude.Max) / 2
	if lon > LongMax {
		lon = LongMax
	}
	if lon < LongMin {
		lon = LongMin
	}
	lat := (a.Latitude.Min + a.Latitude.Max) / 2
	if lat > LatMax {
		lat = LatMax
	}
	if lat < LatMin {
		lat = LatMin
	}
	return lon, lat
}

// DecodeToLongLat is geohashDecodeToLongLatWGS84.
func DecodeToLongLat(h Bits) (lon, lat float64, ok bool) {
	a, ok := DecodeWGS84(h)
	if !ok {
		return 0, 0, false
	}
	lon, lat = a.center()
	return lon, lat, true
}

// DecodeScore is geo.c's decodeGeohash: the position a sorted set score
// stands for.
//
// It is DecodeToLongLat(Bits{CUint64(score), StepMax}) with the constants
// folded: the same operations on the same values (a division by 2^26 is
// the multiplication by 2^-26), never !ok.
func DecodeScore(score float64) (lon, lat float64, ok bool) {
	sep := deinterleave64(CUint64(score))
	ilato := uint32(sep)
	ilono := uint32(sep >> 32)
	const inv = 0x1p-26 // 1.0 / (1 << StepMax)
	latMin := latRangeWGS84.Min + float64((float64(ilato)*inv)*latScaleWGS84)
	latMax := latRangeWGS84.Min + float64((float64(ilato+1)*inv)*latScaleWGS84)
	lonMin := longRangeWGS84.Min + float64((float64(ilono)*inv)*longScaleWGS84)
	lonMax := longRangeWGS84.Min + float64((float64(ilono+1)*inv)*longScaleWGS84)
	a := Area{Longitude: Range{lonMin, lonMax}, Latitude: Range{latMin, latMax}}
	lon, lat = a.center()
	return lon, lat, true
}

// latScaleWGS84 and longScaleWGS84 are Decode's latScale and longScale,
// computed in double precision as C does.
var (
	latScaleWGS84  = latRangeWGS84.Max - latRangeWGS84.Min
	longScaleWGS84 = longRangeWGS84.Max - longRangeWGS84.Min
)

// Align52 is geohashAlign52Bits.
func Align52(h Bits) uint64 { return h.Bits << (52 - uint(h.Step)*2) }

// Score is the sorted set score GEOADD stores for a valid position.
func Score(longitude, latitude float64) uint64 {
	h, _ := EncodeWGS84(longitude, latitude, StepMax)
	return Align52(h)
}

func moveX(h *Bits, d int) { move(h, d, 0xaaaaaaaaaaaaaaaa) }

func moveY(h *Bits, d int) { move(h, d, 0x5555555555555555) }

// move is geohash_move_x (mask: the longitude bits, 0xaaaa...) and
// geohash_move_y (the latitude bits, 0x5555...): the interleaved bits
// under mask step by d (-1, 0 or 1) cells, the others stay.
func move(h *Bits, d int, mask uint64) {
	if d == 0 {
		return
	}
	m := h.Bits & mask
	rest := h.Bits &^ mask
	zz := ^mask >> (64 - uint(h.Step)*2)
	if d > 0 {
		m = m + (zz + 1)
	} else {
		m = m | zz
		m = m - (zz + 1)
	}
	m &= mask >> (64 - uint(h.Step)*2)
	h.Bits = m | rest
}

// NeighborsOf is geohashNeighbors.
func NeighborsOf(h Bits) Neighbors {
	mv := func(dx, dy int) Bits {
		b := h
		moveX(&b, dx)
		moveY(&b, dy)
		return b
	}
	return Neighbors{
		East: mv(1, 0), West: mv(-1, 0), South: mv(0, -1), North: mv(0, 1),
		NorthWest: mv(-1, 1), NorthEast: mv(1, 1), SouthEast: mv(1, -1), SouthWest: mv(-1, -1),
	}
}

// Hash is GEOHASH's 11-character string of a score: the position decoded,
// then encoded again over the standard ranges (latitude -90..90), 52 bits
// and a last character of 0. ok is false when the score does not decode.
func Hash(score float64) (string, bool) {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	lon, lat, ok := DecodeScore(score)
	if !ok {
		return "", false
	}
	h, _ := Encode(Range{-180, 180}, Range{-90, 90}, lon, lat, 26)
	var buf [11]byte
	for i := 0; i < 11; i++ {
		idx := 0
		if i != 10 {
			idx = int((h.Bits >> (52 - (uint(i)+1)*5)) & 0x1f)
		}
		buf[i] = alphabet[idx]
	}
	return string(buf[:]), true
}
