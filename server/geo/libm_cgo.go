//go:build cgo

package geo

/*
#cgo LDFLAGS: -lm
#include <math.h>

// geohashGetDistance as Redis 7.0's geohash_helper.c writes it, evaluated
// by the C compiler and the system's libm, as redis-server's is.
static double vigil_geo_distance(double lon1d, double lat1d, double lon2d, double lat2d) {
	const double d_r = M_PI / 180.0;
	const double earth = 6372797.560856;
	double lat1r, lon1r, lat2r, lon2r, u, v, a;
	lon1r = lon1d * d_r;
	lon2r = lon2d * d_r;
	v = sin((lon2r - lon1r) / 2);
	if (v == 0.0)
		return earth * fabs(lat2d * d_r - lat1d * d_r);
	lat1r = lat1d * d_r;
	lat2r = lat2d * d_r;
	u = sin((lat2r - lat1r) / 2);
	a = u * u + cos(lat1r) * cos(lat2r) * v * v;
	return 2.0 * earth * asin(sqrt(a));
}
*/
import "C"

// SystemLibm reports whether SystemDistance uses the system's C library.
const SystemLibm = true

// SystemDistance is Distance computed in C with the system's libm, the
// sin, cos and asin redis-server calls: the same bits as redis-server's on
// the same machine, where Distance's correctly rounded functions can differ
// from glibc's in the last bit. One cgo call (tens of ns), so it serves
// where all 17 digits show (STOREDIST), not the searches' hot loops.
func SystemDistance(lon1d, lat1d, lon2d, lat2d float64) float64 {
	return float64(C.vigil_geo_distance(C.double(lon1d), C.double(lat1d), C.double(lon2d), C.double(lat2d)))
}
