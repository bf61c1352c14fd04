package server

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
	"github.com/vigil-kv/vigil/server/geo"
)

// TestGeoStoreDistSystemLibm: a STOREDIST score shows all 17 digits of a
// distance, which redis-server computes with the system's libm (glibc's
// sin, cos and asin are not always correctly rounded, server/geo's are).
// For members whose correctly rounded distance differs from glibc's in
// the last bit, Vigil's stored score must still be redis-server's, to the
// byte. Needs a cgo build (geo.SystemLibm); without one the deviation is
// the documented one.
func TestGeoStoreDistSystemLibm(t *testing.T) {
	if !geo.SystemLibm {
		t.Skip("built without cgo: STOREDIST uses the correctly rounded distance (CGO_ENABLED=1 and a C compiler: apt-get install -y gcc)")
	}
	testutil.NeedRedis(t)
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	// Points around a centre whose distances differ between the two
	// evaluations, as positions GEOADD stores (decoded from their scores).
	const clon, clat = 15.0, 37.0
	rng := rand.New(rand.NewPCG(7, 11))
	var members [][2]string
	for tries := 0; len(members) < 20 && tries < 2_000_000; tries++ {
		lon := clon + rng.Float64()*4 - 2
		lat := clat + rng.Float64()*4 - 2
		dlon, dlat, ok := geo.DecodeScore(float64(geo.Score(lon, lat)))
		if !ok {
			continue
		}
		if geo.Distance(clon, clat, dlon, dlat) != geo.SystemDistance(clon, clat, dlon, dlat) {
			members = append(members, [2]string{strconv.FormatFloat(lon, 'f', -1, 64), strconv.FormatFloat(lat, 'f', -1, 64)})
		}
	}
	if len(members) == 0 {
		t.Skip("this libm's distances are all correctly rounded here: nothing to tell apart")
	}
	rc := dialOracle(t, startRedisOracle(t, nil))
	defer rc.c.Close()
	ts := newTestServer(t)
	c := ts.client()
	same := func(args ...string) string {
		t.Helper()
		want := rawDo(t, rc.c, rc.br, args...)
		if got := ts.do(c, args...); got != want {
			t.Fatalf("%v: vigil %q, redis %q", args, got, want)
		}
		return want
	}
	for i, m := range members {
		same("GEOADD", "pts", m[0], m[1], "m"+strconv.Itoa(i))
	}
	same("GEORADIUS", "pts", "15", "37", "400", "km", "STOREDIST", "d")
	same("GEOSEARCHSTORE", "d2", "pts", "FROMLONLAT", "15", "37", "BYBOX", "800", "800", "km", "STOREDIST")
	for _, k := range []string{"d", "d2"} {
		r := same("ZRANGE", k, "0", "-1", "WITHSCORES")
		if n := len(r); n < 10 {
			t.Fatalf("%s: %q: too few members stored", k, r)
		}
	}
	// A radius equal to the smaller of the two evaluations: which side of
	// the edge the member falls on is redis-server's decision.
	for i, m := range members {
		lon, _ := strconv.ParseFloat(m[0], 64)
		lat, _ := strconv.ParseFloat(m[1], 64)
		dlon, dlat, _ := geo.DecodeScore(float64(geo.Score(lon, lat)))
		r := math.Min(geo.Distance(clon, clat, dlon, dlat), geo.SystemDistance(clon, clat, dlon, dlat))
		rs := strconv.FormatFloat(r, 'g', 17, 64)
		key := "e" + strconv.Itoa(i)
		same("GEOADD", key, m[0], m[1], "m")
		same("GEORADIUS", key, "15", "37", rs, "m", "WITHDIST")
		same("GEOSEARCH", key, "FROMLONLAT", "15", "37", "BYRADIUS", rs, "m")
		// BYBOX: the east-west distance along the member's latitude
		// against half the width.
		w := math.Min(geo.Distance(dlon, dlat, clon, dlat), geo.SystemDistance(dlon, dlat, clon, dlat))
		same("GEOSEARCH", key, "FROMLONLAT", "15", "37", "BYBOX", strconv.FormatFloat(2*w, 'g', 17, 64), "2000000", "m", "WITHDIST")
	}
	boxDiffers := 0
	for _, m := range members {
		lon, _ := strconv.ParseFloat(m[0], 64)
		lat, _ := strconv.ParseFloat(m[1], 64)
		dlon, dlat, _ := geo.DecodeScore(float64(geo.Score(lon, lat)))
		if geo.Distance(dlon, dlat, clon, dlat) != geo.SystemDistance(dlon, dlat, clon, dlat) {
			boxDiffers++
		}
	}
	t.Logf("%d members, %d with a different east-west distance", len(members), boxDiffers)
	// And the distances differ from the correctly rounded ones somewhere,
	// or the test above proves nothing.
	diff := 0
	for i := range members {
		w := rawDo(t, rc.c, rc.br, "ZSCORE", "d", "m"+strconv.Itoa(i))
		lon, _ := strconv.ParseFloat(members[i][0], 64)
		lat, _ := strconv.ParseFloat(members[i][1], 64)
		dlon, dlat, _ := geo.DecodeScore(float64(geo.Score(lon, lat)))
		cr := strconv.FormatFloat(geo.Distance(clon, clat, dlon, dlat)/1000, 'g', 17, 64)
		if !math.IsNaN(dlon) && !strings.Contains(w, cr) {
			diff++
		}
	}
	if diff == 0 {
		t.Fatalf("no stored score differs from the correctly rounded distance")
	}
}

// TestGeoNearTies: two points whose distances (as computed) are a few ulps
// apart are sorted again on the system libm's distances; points at one
// position, or far apart, are not.
func TestGeoNearTies(t *testing.T) {
	if !geo.SystemLibm {
		t.Skip("built without cgo: no system distances to sort on")
	}
	shape := geo.Shape{Lon: 15, Lat: 37}
	near := float64(geo.Score(15.5, 37.5))
	far := float64(geo.Score(16.5, 38.5))
	d := 100000.0
	ga := []geoPoint{{dist: d, score: far, member: "far"}, {dist: math.Nextafter(d, 0), score: near, member: "near"}}
	if !geoNearTies(ga, 2) || !geoNearTies(ga, 1) {
		t.Fatal("distances an ulp apart at two positions: not a near tie")
	}
	if geoNearTies([]geoPoint{{dist: d, score: near}, {dist: d, score: near}}, 2) {
		t.Fatal("one position: a near tie")
	}
	if geoNearTies([]geoPoint{{dist: d, score: near}, {dist: d * 1.001, score: far}}, 2) {
		t.Fatal("distances 0.1% apart: a near tie")
	}
	geoSystemDists(ga, &shape)
	lon, lat, _ := geo.DecodeScore(near)
	if ga[1].dist != geo.SystemDistance(15, 37, lon, lat) || !(ga[1].dist < ga[0].dist) {
		t.Fatalf("system distances: %v", ga)
	}
	sorted, ok := geoSortByDist(ga, false)
	if !ok || sorted[0].member != "near" {
		t.Fatalf("sorted on system distances: %v", sorted)
	}
}
