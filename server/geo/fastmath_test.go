package geo

import (
	"math"
	"math/rand"
	"os"
	"strconv"
	"testing"
)

// trigCount is the number of random inputs per class of the fast-vs-
// reference tests: VIGIL_GEO_TRIG_N overrides it (runs by hand).
func trigCount(t testing.TB, def int) int {
	if s := os.Getenv("VIGIL_GEO_TRIG_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("VIGIL_GEO_TRIG_N=%q: %v", s, err)
		}
		return n
	}
	if testing.Short() {
		return def / 10
	}
	return def
}

// trigInputs are arguments of the kinds the geo formulas pass to sin and
// cos: radians of longitudes and latitudes, their half differences (at
// every scale down to the 52-bit grid's and below), the whole [-4, 4], and
// values next to the table's points and cell edges.
func trigInputs(r *rand.Rand, n int, f func(float64)) {
	rad := func(deg float64) float64 { return degRad(deg) }
	for _, x := range []float64{0, math.Copysign(0, -1), 5e-324, -5e-324, 0x1p-1022, 0x1p-200, 0x1p-199, 1e-300,
		math.Pi / 2, -math.Pi / 2, math.Pi, -math.Pi, math.Pi / 4, 4, -4, math.Nextafter(4, 5), 1.0 / 128, 1.0 / 64,
		rad(85.05112878), rad(-85.05112878), rad(180), rad(-180), rad(90), rad(360) / 2, math.NaN(), math.Inf(1)} {
		f(x)
		f(math.Nextafter(x, 10))
		f(math.Nextafter(x, -10))
	}
	for k := -256; k <= 256; k++ {
		for _, off := range []float64{0, 1.0 / 128, -1.0 / 128} {
			x := float64(k)/64 + off
			for i := -3; i <= 3; i++ {
				y := x
				for j := 0; j < i; j++ {
					y = math.Nextafter(y, 10)
				}
				for j := 0; j > i; j-- {
					y = math.Nextafter(y, -10)
				}
				f(y)
			}
		}
	}
	for i := 0; i < n; i++ {
		f((r.Float64()*2 - 1) * 4)
		f(rad(r.Float64()*180 - 90))
		f(rad(r.Float64()*360 - 180))
		lat1, lat2 := rad(r.Float64()*170-85), rad(r.Float64()*170-85)
		f((lat2 - lat1) / 2)
		// Nearby points: half differences of 1e-9 to 10 degrees.
		lat := r.Float64()*170 - 85
		dl := math.Pow(10, r.Float64()*10-9) * (r.Float64()*2 - 1)
		f((rad(lat+dl) - rad(lat)) / 2)
		f(math.Ldexp(r.Float64()+0.5, -r.Intn(220)) * float64(1-2*r.Intn(2)))
	}
}

func TestSinCosMatchReference(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	n, bad := 0, 0
	trigInputs(r, trigCount(t, 100000), func(x float64) {
		n++
		if got, want := sin(x), sinAccurate(x); math.Float64bits(got) != math.Float64bits(want) {
			bad++
			if bad < 10 {
				t.Errorf("sin(%v) = %v, the reference %v", x, got, want)
			}
		}
		if got, want := cos(x), cosAccurate(x); math.Float64bits(got) != math.Float64bits(want) {
			bad++
			if bad < 10 {
				t.Errorf("cos(%v) = %v, the reference %v", x, got, want)
			}
		}
	})
	t.Logf("%d arguments", n)
}

func TestAsinMatchesReference(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	check := func(y float64) {
		if got, want := asin(y), asinAccurate(y); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("asin(%v) = %v, the reference %v", y, got, want)
		}
	}
	for _, y := range []float64{0, math.Copysign(0, -1), 5e-324, 0x1p-200, 1.0 / 128, asinMax, 1, -1, 1.5, math.NaN()} {
		check(y)
		check(math.Nextafter(y, 10))
		check(math.Nextafter(y, -10))
		check(-y)
	}
	n := trigCount(t, 100000)
	for i := 0; i < n; i++ {
		check(r.Float64())
		check(-r.Float64())
		check(math.Ldexp(r.Float64()+0.5, -r.Intn(220)))
		// sqrt(a) of Distance, for distances of 1 mm to 20000 km.
		check(math.Sqrt(math.Pow(10, r.Float64()*10-3) / (2 * earthRadiusInMeters)))
		check(math.Sin(math.Pow(10, r.Float64()*10-3) / (2 * earthRadiusInMeters)))
	}
}

// TestFastErrorBounds checks the error bounds the rounding test relies
// on, against the double-double reference: the fast values stay within a
// sixteenth of err of it.
func TestFastErrorBounds(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	worst := 0.0
	note := func(what string, x, gotHi, gotLo, err float64, ref dd) {
		d := ddAdd(dd{gotHi, gotLo}, dd{-ref.hi, -ref.lo})
		if q := math.Abs(d.hi) / err; q > worst {
			worst = q
			if q > 1.0/16 {
				t.Errorf("%s(%v): off the reference by %g, err %g", what, x, d.hi, err)
			}
		}
	}
	trigInputs(r, trigCount(t, 30000), func(x float64) {
		ax := math.Abs(x)
		if ax >= tinyArg && ax <= 4 {
			hi, lo, err := sinFast(ax)
			note("sin", ax, hi, lo, err, sinDD(ax))
		}
		if ax <= 4 {
			hi, lo, err := cosFast(ax)
			note("cos", ax, hi, lo, err, cosDD(ax))
		}
		if ax >= tinyArg && ax <= asinMax {
			// asin: hi+lo is t with sin(t) = y; its error is about
			// (sin(t) - y)/cos(t).
			hi, lo, err := asinFast(ax)
			s := ddAdd(sinDD(hi), ddMul(cosDD(hi), dd{lo, 0}))
			d := ddAdd(s, dd{-ax, 0})
			if q := math.Abs(d.hi/math.Cos(hi)) / err; q > worst {
				worst = q
				if q > 1.0/16 {
					t.Errorf("asin(%v): off by %g, err %g", ax, d.hi/math.Cos(hi), err)
				}
			}
		}
	})
	t.Logf("worst error / bound: %g", worst)
}

// distanceAccurate is Distance with the reference functions.
func distanceAccurate(lon1d, lat1d, lon2d, lat2d float64) float64 {
	lon1r := degRad(lon1d)
	lon2r := degRad(lon2d)
	v := sinAccurate((lon2r - lon1r) / 2)
	if v == 0.0 {
		return LatDistance(lat1d, lat2d)
	}
	lat1r := degRad(lat1d)
	lat2r := degRad(lat2d)
	u := sinAccurate((lat2r - lat1r) / 2)
	a := u*u + cosAccurate(lat1r)*cosAccurate(lat2r)*v*v
	return 2.0 * earthRadiusInMeters * asinAccurate(math.Sqrt(a))
}

func TestDistanceMatchesReference(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	n := trigCount(t, 100000)
	for i := 0; i < n; i++ {
		lon1, lat1 := r.Float64()*360-180, r.Float64()*170.1-85.05
		lon2, lat2 := r.Float64()*360-180, r.Float64()*170.1-85.05
		if i%2 == 0 {
			// nearby: within 0.001 to 10 degrees
			s := math.Pow(10, r.Float64()*4-3)
			lon2, lat2 = lon1+(r.Float64()*2-1)*s, lat1+(r.Float64()*2-1)*s
		}
		if got, want := Distance(lon1, lat1, lon2, lat2), distanceAccurate(lon1, lat1, lon2, lat2); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("Distance(%v, %v, %v, %v) = %v, the reference %v", lon1, lat1, lon2, lat2, got, want)
		}
	}
}

// benchPoints are pairs of a centre and points within about 20 km, as a
// GEOSEARCH compares.
func benchPoints() [][4]float64 {
	r := rand.New(rand.NewSource(5))
	p := make([][4]float64, 1024)
	for i := range p {
		p[i] = [4]float64{13.5, 52.5, 13.5 + (r.Float64()-0.5)*0.6, 52.5 + (r.Float64()-0.5)*0.36}
	}
	return p
}

func BenchmarkDistance(b *testing.B) { benchDistance(b, Distance) }

func BenchmarkDistanceAccurate(b *testing.B) { benchDistance(b, distanceAccurate) }

// benchDistance times dist over benchPoints.
func benchDistance(b *testing.B, dist func(lon1, lat1, lon2, lat2 float64) float64) {
	p := benchPoints()
	s := 0.0
	for i := 0; i < b.N; i++ {
		q := &p[i&1023]
		s += dist(q[0], q[1], q[2], q[3])
	}
	_ = s
}

// TestWithinMatchesReference: Within's distances (the centre's cos
// computed once) are the reference formulas'.
func TestWithinMatchesReference(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	n := trigCount(t, 20000)
	for i := 0; i < n; i++ {
		s := Shape{Lon: r.Float64()*360 - 180, Lat: r.Float64()*170 - 85, Conversion: 1000,
			Radius: r.Float64() * 500, Width: r.Float64() * 1000, Height: r.Float64() * 1000, Box: i%2 == 1}
		for j := 0; j < 20; j++ {
			lon := s.Lon + (r.Float64()*2-1)*math.Pow(10, r.Float64()*3-2)
			lat := s.Lat + (r.Float64()*2-1)*math.Pow(10, r.Float64()*3-2)
			if lon < -180 || lon > 180 || lat < -85 || lat > 85 {
				continue
			}
			score := float64(Score(lon, lat))
			plon, plat, dist, ok := s.Within(score)
			var want float64
			wantOK := true
			if s.Box {
				if LatDistance(plat, s.Lat) > s.Height*s.Conversion/2 ||
					distanceAccurate(plon, plat, s.Lon, plat) > s.Width*s.Conversion/2 {
					wantOK = false
				} else {
					want = distanceAccurate(s.Lon, s.Lat, plon, plat)
				}
			} else {
				want = distanceAccurate(s.Lon, s.Lat, plon, plat)
				wantOK = !(want > s.Radius*s.Conversion)
			}
			if ok != wantOK || ok && math.Float64bits(dist) != math.Float64bits(want) {
				t.Fatalf("%+v Within(%v) = %v %v, want %v %v", s, score, dist, ok, want, wantOK)
			}
		}
	}
}

// TestDecodeScoreFolded: DecodeScore is DecodeToLongLat of the score's
// bits at step 26, bit for bit, also for scores out of the 52 bits.
func TestDecodeScoreFolded(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	check := func(score float64) {
		lon, lat, ok := DecodeScore(score)
		wlon, wlat, wok := DecodeToLongLat(Bits{Bits: CUint64(score), Step: StepMax})
		if ok != wok || math.Float64bits(lon) != math.Float64bits(wlon) || math.Float64bits(lat) != math.Float64bits(wlat) {
			t.Fatalf("DecodeScore(%v) = %v, %v, %v; want %v, %v, %v", score, lon, lat, ok, wlon, wlat, wok)
		}
	}
	for _, s := range []float64{0, -1, 1, 1 << 52, 1<<52 - 1, 1e17, -1e17, math.Inf(1), math.Inf(-1), math.NaN(), 1 << 63, 1 << 64} {
		check(s)
	}
	for i := 0; i < trigCount(t, 100000); i++ {
		check(float64(r.Int63n(1 << 52)))
		check(float64(Score(r.Float64()*360-180, r.Float64()*170.2-85.1)))
		check(math.Float64frombits(r.Uint64()))
	}
}

// TestFastPathsDecide: on the arguments of distances up to 20 km around
// (13.5, 52.5), the fast paths decide the rounding all but a few times in
// a million (the reference is 50 times slower).
func TestFastPathsDecide(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	n, undecided := 0, 0
	try := func(hi, lo, err float64) {
		n++
		if !roundsTo(hi, lo, err) {
			undecided++
		}
	}
	for i := 0; i < trigCount(t, 100000); i++ {
		lon, lat := 13.5+(r.Float64()-0.5)*0.6, 52.5+(r.Float64()-0.5)*0.36
		try(sinFast(math.Abs(degRad(lon)-degRad(13.5)) / 2))
		try(sinFast(math.Abs(degRad(lat)-degRad(52.5)) / 2))
		try(cosFast(degRad(lat)))
		try(asinFast(math.Sin(Distance(13.5, 52.5, lon, lat) / (2 * earthRadiusInMeters))))
	}
	if undecided*100000 > n {
		t.Errorf("%d of %d undecided", undecided, n)
	}
	t.Logf("%d of %d undecided", undecided, n)
}
