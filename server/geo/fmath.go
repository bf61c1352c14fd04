package geo

import "math"

// The distance formula needs sin, cos and asin as close to glibc's as
// possible: Go's math package is one ulp away from glibc for 3% to 10% of
// the inputs of the geo formulas, glibc is correctly rounded for all but
// about 0.1% of them. These evaluate in double-double arithmetic (about
// 106 bits) and round once: the correctly rounded result.

// dd is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	e := (a - (s - bb)) + (b - bb)
	return dd{s, e}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := float64(a * b) // rounded: no fusion into the caller's sums
	return dd{p, math.FMA(a, b, -p)}
}

func ddAdd(a, b dd) dd {
	s := twoSum(a.hi, b.hi)
	t := twoSum(a.lo, b.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func ddMul(a, b dd) dd {
	p := twoProd(a.hi, b.hi)
	p.lo += a.hi*b.lo + a.lo*b.hi
	return quickTwoSum(p.hi, p.lo)
}

// ddDivF is a / b for a double b.
func ddDivF(a dd, b float64) dd {
	q1 := a.hi / b
	p := twoProd(q1, b)
	r := ddAdd(a, dd{-p.hi, -p.lo})
	q2 := r.hi / b
	p = twoProd(q2, b)
	r = ddAdd(r, dd{-p.hi, -p.lo})
	q3 := r.hi / b
	q := quickTwoSum(q1, q2)
	return ddAdd(q, dd{q3, 0})
}

// sinDD is sin(x) in double-double for |x| <= 4 (Taylor series).
func sinDD(x float64) dd {
	x2 := twoProd(x, x)
	term := dd{x, 0}
	sum := term
	for k := 1; k < 60; k++ {
		term = ddMul(term, x2)
		term = ddDivF(term, float64((2*k)*(2*k+1)))
		term = dd{-term.hi, -term.lo}
		sum = ddAdd(sum, term)
		if math.Abs(term.hi) < math.Abs(sum.hi)*1e-36 || term.hi == 0 {
			break
		}
	}
	return sum
}

// cosDD is cos(x) in double-double for |x| <= 4.
func cosDD(x float64) dd {
	x2 := twoProd(x, x)
	term := dd{1, 0}
	sum := term
	for k := 1; k < 60; k++ {
		term = ddMul(term, x2)
		term = ddDivF(term, float64((2*k-1)*(2*k)))
		term = dd{-term.hi, -term.lo}
		sum = ddAdd(sum, term)
		if math.Abs(term.hi) < math.Abs(sum.hi)*1e-36 || term.hi == 0 {
			break
		}
	}
	return sum
}

// sinAccurate, cosAccurate and asinAccurate are the reference: sin, cos
// and asin (fastmath.go) return their results, bit for bit, taking this
// slow path only when their fast evaluation cannot decide the rounding.
func sinAccurate(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.Abs(x) > 4 {
		return math.Sin(x)
	}
	return sinDD(x).hi
}

func cosAccurate(x float64) float64 {
	if math.IsNaN(x) || math.Abs(x) > 4 {
		return math.Cos(x)
	}
	return cosDD(x).hi
}

// asinAccurate refines math.Asin with Newton steps on sin in double-double.
func asinAccurate(y float64) float64 {
	if y == 0 || math.IsNaN(y) || math.Abs(y) >= 1 {
		return math.Asin(y)
	}
	t := dd{math.Asin(y), 0}
	for i := 0; i < 2; i++ {
		// t -= (sin(t) - y) / cos(t), with sin(t) of the dd t expanded to
		// first order in t.lo.
		s := sinDD(t.hi)
		c := cosDD(t.hi)
		s = ddAdd(s, ddMul(c, dd{t.lo, 0}))
		r := ddAdd(s, dd{-y, 0})
		corr := r.hi / c.hi
		t = ddAdd(t, dd{-corr, 0})
	}
	return t.hi
}
