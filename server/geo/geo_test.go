package geo

import (
	"math"
	"strconv"
	"testing"
)

// The expected values are redis-server 7.0.15's (GEOADD then ZSCORE,
// GEOPOS, GEOHASH, GEODIST, GEORADIUS ... STOREDIST).

func TestScore(t *testing.T) {
	for _, tc := range []struct {
		lon, lat float64
		score    uint64
	}{
		{13.361389, 38.115556, 3479099956230698},
		{15.087269, 37.502669, 3479447370796909},
		{13.583333, 37.316667, 3479030013248308},
		{13.37, 38.12, 3479099963001825},
	} {
		if got := Score(tc.lon, tc.lat); got != tc.score {
			t.Errorf("Score(%v, %v) = %d, want %d", tc.lon, tc.lat, got, tc.score)
		}
	}
}

func TestDecodeScore(t *testing.T) {
	human := func(f float64) string {
		s := strconv.FormatFloat(f, 'f', 17, 64)
		for s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
		if s[len(s)-1] == '.' {
			s = s[:len(s)-1]
		}
		return s
	}
	for _, tc := range []struct {
		score    float64
		lon, lat string
		hash     string
	}{
		{3479099956230698, "13.36138933897018433", "38.11555639549629859", "sqc8b49rny0"},
		{3479447370796909, "15.08726745843887329", "37.50266842333162032", "sqdtr74hyu0"},
		{4503599627370495, "179.99999731779098511", "85.05112751263942528", "zzpgzgpfxz0"},
		{0, "-179.99999731779098511", "-85.05112751263942528", "00bh0hbj200"},
		{-1, "180", "85.0511287799999991", "bp05b5048p0"},   // (uint64_t)-1.0: every bit set
		{1e17, "180", "85.0511287799999991", "bp05b5048p0"}, // bits past the 52nd
		{4503599627370496, "-179.99999731779098511", "85.0511287799999991", "bp05b5048p0"},
		{math.Inf(1), "-179.99999731779098511", "-85.05112751263942528", "00bh0hbj200"}, // converts to 0
	} {
		lon, lat, ok := DecodeScore(tc.score)
		if !ok || human(lon) != tc.lon || human(lat) != tc.lat {
			t.Errorf("DecodeScore(%v) = %s, %s, %v; want %s, %s", tc.score, human(lon), human(lat), ok, tc.lon, tc.lat)
		}
		if h, ok := Hash(tc.score); !ok || h != tc.hash {
			t.Errorf("Hash(%v) = %q, %v; want %q", tc.score, h, ok, tc.hash)
		}
	}
}

func TestDistance(t *testing.T) {
	pos := func(score float64) (float64, float64) {
		lon, lat, _ := DecodeScore(score)
		return lon, lat
	}
	for _, tc := range []struct {
		a, b float64
		unit float64
		want string
	}{
		{3479099956230698, 3479447370796909, 1, "166274.1516"},
		{3479099956230698, 3479447370796909, 1000, "166.2742"},
		{4503599627370495, 0, 1, "18919844.4481"},
		{0, -1, 1000, "18919.8446"},
	} {
		lon1, lat1 := pos(tc.a)
		lon2, lat2 := pos(tc.b)
		if got := strconv.FormatFloat(Distance(lon1, lat1, lon2, lat2)/tc.unit, 'f', 4, 64); got != tc.want {
			t.Errorf("Distance(%v, %v) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
	// GEORADIUS ... STOREDIST scores: all 17 digits.
	shape := Shape{Lon: 15, Lat: 37, Radius: 200, Conversion: 1000}
	for _, tc := range []struct {
		score float64
		want  string
	}{
		{3479447370796909, "56.441257870158204"},
		{3479030013248308, "130.42348706714702"},
		{3479099963001825, "190.18726915275883"},
	} {
		_, _, d, ok := shape.Within(tc.score)
		if got := strconv.FormatFloat(d/1000, 'g', 17, 64); !ok || got != tc.want {
			t.Errorf("Within(%v) = %s, %v; want %s", tc.score, got, ok, tc.want)
		}
	}
}

func TestEstimateStepsByRadius(t *testing.T) {
	for _, tc := range []struct {
		r, lat float64
		want   uint8
	}{
		{0, 0, 26}, {1, 0, 24}, {1000, 0, 14}, {200000, 0, 6}, {200000, 70, 5}, {200000, -85, 4},
		{5e6, 0, 2}, {1e7, 0, 1}, {math.Inf(1), 0, 1}, {0.001, 0, 26},
	} {
		if got := EstimateStepsByRadius(tc.r, tc.lat); got != tc.want {
			t.Errorf("EstimateStepsByRadius(%v, %v) = %d, want %d", tc.r, tc.lat, got, tc.want)
		}
	}
}

func TestNeighbors(t *testing.T) {
	// Step 1: four cells, 2 bits each (latitude bit, then longitude).
	h := Bits{Bits: 0, Step: 1} // south-west quarter
	n := NeighborsOf(h)
	if n.East.Bits != 2 || n.North.Bits != 1 || n.NorthEast.Bits != 3 || n.West.Bits != 2 || n.South.Bits != 1 {
		t.Errorf("neighbours of %v: %+v", h, n)
	}
	a, ok := DecodeWGS84(Bits{Bits: 3, Step: 1})
	if !ok || a.Longitude.Min != 0 || a.Longitude.Max != 180 || a.Latitude.Min != 0 || a.Latitude.Max != LatMax {
		t.Errorf("DecodeWGS84(3/1) = %+v", a)
	}
	min, max := ScoresOfBox(Bits{Bits: 3, Step: 1})
	if min != 3<<50 || max != 4<<50 {
		t.Errorf("ScoresOfBox = %d, %d", min, max)
	}
}

func TestAreasByShape(t *testing.T) {
	// GEORADIUS Sicily 15 37 200 km: the centre cell and the neighbours
	// kept must cover the three points Redis finds.
	s := Shape{Lon: 15, Lat: 37, Radius: 200, Conversion: 1000}
	r := AreasByShape(&s)
	if r.Hash.Step != 6 {
		t.Errorf("step %d, want 6", r.Hash.Step)
	}
	found := 0
	for _, cell := range r.Cells() {
		if cell.IsZero() {
			continue
		}
		min, max := ScoresOfBox(cell)
		for _, sc := range []uint64{3479447370796909, 3479030013248308, 3479099963001825} {
			if sc >= min && sc < max {
				found++
			}
		}
	}
	if found != 3 {
		t.Errorf("cells cover %d of the 3 points", found)
	}
}

func TestPQSort(t *testing.T) {
	// GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 1 km COUNT 3 (and COUNT 14):
	// twelve equidistant points, pqsort's order.
	type p struct {
		d float64
		n string
	}
	in := []p{{.1112, "m4"}, {.1096, "m2"}, {0, "a"}, {0, "b"}, {0, "c"}, {0, "d"}, {0, "e"}, {0, "f"}, {0, "g"},
		{0, "h"}, {0, "i"}, {0, "j"}, {0, "k"}, {0, "l"}, {.1095, "m0"}, {.1095, "m1"}, {.1111, "m3"}}
	cmp := func(x, y *p) int {
		switch {
		case x.d > y.d:
			return 1
		case x.d == y.d:
			return 0
		}
		return -1
	}
	for _, tc := range []struct {
		count int
		want  string
	}{
		{3, "j l a"},
		{14, "j l a b c d e f g h i k m0 m1"},
	} {
		a := append([]p(nil), in...)
		PQSort(a, cmp, 0, tc.count-1)
		got := ""
		for i, e := range a[:tc.count] {
			if i > 0 {
				got += " "
			}
			got += e.n
		}
		if got != tc.want {
			t.Errorf("COUNT %d: %s, want %s", tc.count, got, tc.want)
		}
	}
}

func TestTrigCorrectlyRounded(t *testing.T) {
	// Values where Go's math package is one ulp away from glibc.
	for _, tc := range []struct {
		f    func(float64) float64
		x    float64
		want float64
	}{
		{sin, 1.1303552086888566, 0.9045636855903064},
		{sin, -2.7875426531163767, -0.34669944479930465},
		{sin, 0, 0},
		{cos, 0, 1},
		{asin, 1, math.Pi / 2},
	} {
		if got := tc.f(tc.x); got != tc.want {
			t.Errorf("f(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}
