package geo

import (
	"math"
	"sync"
)

// sin, cos and asin return what sinAccurate, cosAccurate and asinAccurate
// return, bit for bit, about a hundred times faster: they evaluate the
// function to about 80 bits (hi+lo, with a bound err on its distance to the
// exact value that also covers the reference's own error), and when every
// number within err of hi+lo rounds to hi, that is the reference's result
// too (Ziv's rounding test); otherwise, a few times in a million, they
// call the reference.
//
// sin and cos reduce x to a multiple a of 1/64 and |d| <= 1/128, and
// combine sin(a) and cos(a), from a table computed once by the reference
// in double-double, with sin(d) and cos(d) from their Taylor series:
// sin(a+d) = sin(a)cos(d) + cos(a)sin(d), cos(a+d) = cos(a)cos(d) -
// sin(a)sin(d). asin takes its Taylor series for |y| <= 1/128, and
// otherwise one Newton step on sin from math.Asin.

const tabScale = 64 // table step 1/64

var (
	tabOnce sync.Once
	// sinTab[k] and cosTab[k] are sin(k/64) and cos(k/64) in
	// double-double, for k/64 in [0, 4].
	sinTab, cosTab [4*tabScale + 1]dd
)

func initTab() {
	for k := range sinTab {
		a := float64(k) / tabScale
		sinTab[k] = sinDD(a)
		cosTab[k] = cosDD(a)
	}
}

// c6h+c6l is 1/6 in double-double.
var (
	c6h = 1.0 / 6
	c6l = math.FMA(-6, 1.0/6, 1) / 6
)

const (
	smallArg = 0x1p-7   // the largest |d| of the Taylor paths
	tinyArg  = 0x1p-200 // below, the reference (no underflow to reason about)
	asinMax  = 0.95     // above, the reference (Newton's division by cos(t))
)

// The products an error-free transformation takes apart (FMA(a, b, -p)
// for p = a*b, a sum split by twoSumF) are converted explicitly: Go may
// fuse a product into a later addition (GOAMD64=v3, arm64) unless its
// rounding is asked for.

// fast2Sum is s+e = a+b exactly, for |a| >= |b| (or a == 0).
func fast2Sum(a, b float64) (s, e float64) {
	s = a + b
	return s, b - (s - a)
}

// twoSumF is s+e = a+b exactly.
func twoSumF(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

// sinSmall is sin(d) = sh+sl for |d| <= 1/128, to within |d|*2^-84:
// d - d^3/6 (in double-double) + d^5*(1/120 - d^2/5040 + d^4/362880); the
// next term is below |d|*2^-95.
func sinSmall(d float64) (sh, sl float64) {
	d2 := float64(d * d)
	d2l := math.FMA(d, d, -d2)
	ph := float64(d * d2) // ph+pl = d^3
	pl := math.FMA(d, d2, -ph) + d*d2l
	q := float64(ph * c6h) // q+ql = d^3/6
	ql := math.FMA(ph, c6h, -q) + ph*c6l + pl*c6h
	r := d * d2 * d2 * (1.0/120 + d2*(-1.0/5040+d2*(1.0/362880)))
	sh, sl = fast2Sum(d, -q)
	sl += r - ql
	return sh, sl
}

// cosSmall is cos(d) = 1 + ch + cl for |d| <= 1/128, to within 2^-84:
// -d^2/2 (exact) + d^4*(1/24 - d^2/720 + d^4/40320); the next term is below
// 2^-91.
func cosSmall(d float64) (ch, cl float64) {
	d2 := float64(d * d)
	d2l := math.FMA(d, d, -d2)
	ch = -d2 / 2
	cl = d2*d2*(1.0/24+d2*(-1.0/720+d2*(1.0/40320))) - d2l/2
	return ch, cl
}

// nearestK is x*64 rounded to an integer, for 0 <= x <= 4: |x - k/64| <=
// 1/128, so x - k/64 is exact. (int(x*64 + 0.5) is not: the sum rounds
// up at x just below 1/128.)
func nearestK(x float64) int {
	y := x * tabScale // exact
	k := int(y)
	if y-float64(k) >= 0.5 {
		k++
	}
	return k
}

// sinFast is sin(x) ~ hi+lo, with |hi+lo - sin(x)| plus the reference's
// error at most err, for tinyArg <= x <= 4.
func sinFast(x float64) (hi, lo, err float64) {
	k := nearestK(x)
	if k == 0 {
		sh, sl := sinSmall(x)
		hi, lo = fast2Sum(sh, sl)
		return hi, lo, x * 0x1p-80
	}
	tabOnce.Do(initTab)
	d := x - float64(k)/tabScale // exact
	sh, sl := sinSmall(d)
	ch, cl := cosSmall(d)
	S, C := sinTab[k], cosTab[k]
	// sin(a)(1 + ch + cl) + cos(a)(sh + sl)
	p1h := float64(C.hi * sh)
	p1l := math.FMA(C.hi, sh, -p1h)
	p2h := float64(S.hi * ch)
	p2l := math.FMA(S.hi, ch, -p2h)
	s1, e1 := twoSumF(S.hi, p1h)
	s2, e2 := twoSumF(s1, p2h)
	lo = S.hi*cl + (e1 + e2 + p1l + p2l + S.lo + C.lo*sh + C.hi*sl + S.lo*ch)
	hi, lo = fast2Sum(s2, lo)
	return hi, lo, 0x1p-76
}

// cosFast is cos(x) ~ hi+lo like sinFast, for 0 <= x <= 4.
func cosFast(x float64) (hi, lo, err float64) {
	k := nearestK(x)
	if k == 0 {
		ch, cl := cosSmall(x)
		s, e := fast2Sum(1, ch)
		hi, lo = fast2Sum(s, e+cl)
		return hi, lo, 0x1p-78
	}
	tabOnce.Do(initTab)
	d := x - float64(k)/tabScale // exact
	sh, sl := sinSmall(d)
	ch, cl := cosSmall(d)
	S, C := sinTab[k], cosTab[k]
	// cos(a)(1 + ch + cl) - sin(a)(sh + sl)
	p1h := float64(-S.hi * sh)
	p1l := math.FMA(-S.hi, sh, -p1h)
	p2h := float64(C.hi * ch)
	p2l := math.FMA(C.hi, ch, -p2h)
	s1, e1 := twoSumF(C.hi, p1h)
	s2, e2 := twoSumF(s1, p2h)
	lo = C.hi*cl + (e1 + e2 + p1l + p2l + C.lo - S.lo*sh - S.hi*sl + C.lo*ch)
	hi, lo = fast2Sum(s2, lo)
	return hi, lo, 0x1p-76
}

// roundsTo reports whether every number within err of hi+lo rounds to hi
// (to nearest): |lo| + err stays below g, half of hi's ulp (a quarter when
// hi is a power of two: the gap below it is half an ulp), so inside the
// half gaps to both neighbours of hi. fl(|lo|+err) < g implies |lo|+err <
// g, g being a double. For a zero or subnormal hi, g is 0: false. hi is
// finite here.
func roundsTo(hi, lo, err float64) bool {
	b := math.Float64bits(hi)
	g := math.Float64frombits(b&0x7ff0000000000000) * 0x1p-53
	if b&(1<<52-1) == 0 {
		g *= 0.5
	}
	return math.Abs(lo)+err < g
}

func sin(x float64) float64 {
	ax := math.Abs(x)
	if !(ax >= tinyArg && ax <= 4) {
		return sinAccurate(x)
	}
	if hi, lo, err := sinFast(ax); roundsTo(hi, lo, err) {
		if x < 0 {
			return -hi
		}
		return hi
	}
	return sinAccurate(x)
}

func cos(x float64) float64 {
	ax := math.Abs(x)
	if !(ax <= 4) {
		return cosAccurate(x)
	}
	if hi, lo, err := cosFast(ax); roundsTo(hi, lo, err) {
		return hi
	}
	return cosAccurate(x)
}

// asin's Taylor coefficients past y^3/6: (2n)!/(4^n n!^2 (2n+1)).
const (
	asin5  = 3.0 / 40
	asin7  = 5.0 / 112
	asin9  = 35.0 / 1152
	asin11 = 63.0 / 2816
	asin13 = 231.0 / 13312
)

// asinFast is asin(y) ~ hi+lo like sinFast, for tinyArg <= y <= asinMax.
func asinFast(y float64) (hi, lo, err float64) {
	if y <= smallArg {
		// y + y^3/6 (in double-double) + y^5*(3/40 + ...); the next
		// term is below y*2^-100, the rounding of r about y*2^-82.
		y2 := float64(y * y)
		y2l := math.FMA(y, y, -y2)
		ph := float64(y * y2)
		pl := math.FMA(y, y2, -ph) + y*y2l
		q := float64(ph * c6h)
		ql := math.FMA(ph, c6h, -q) + ph*c6l + pl*c6h
		r := y * y2 * y2 * (asin5 + y2*(asin7+y2*(asin9+y2*(asin11+y2*asin13))))
		sh, sl := fast2Sum(y, q)
		hi, lo = fast2Sum(sh, sl+(r+ql))
		return hi, lo, y * 0x1p-78
	}
	// One Newton step t = t0 - (sin(t0) - y)/cos(t0) from t0 within a few
	// ulps: its error is below corr^2 * tan(t0)/2, plus sin's error over
	// cos(t0), plus the rounding of corr (a few ulps of corr).
	t0 := math.Asin(y)
	sh, sl, serr := sinFast(t0)
	c := math.Cos(t0)
	r := (sh - y) + sl // sh - y is exact (Sterbenz)
	corr := r / c
	hi, lo = fast2Sum(t0, -corr)
	corr = math.Abs(corr)
	return hi, lo, (serr+0x1p-88)/c + corr*0x1p-48 + corr*corr/c
}

func asin(y float64) float64 {
	ay := math.Abs(y)
	if !(ay >= tinyArg && ay <= asinMax) {
		return asinAccurate(y)
	}
	if hi, lo, err := asinFast(ay); roundsTo(hi, lo, err) {
		if y < 0 {
			return -hi
		}
		return hi
	}
	return asinAccurate(y)
}
