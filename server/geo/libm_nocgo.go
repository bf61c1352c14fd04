//go:build !cgo

package geo

// SystemLibm reports whether SystemDistance uses the system's C library:
// not in a build without cgo (CGO_ENABLED=0).
const SystemLibm = false

// SystemDistance is Distance in a build without cgo: correctly rounded,
// which can differ from redis-server's glibc in a distance's last bit.
func SystemDistance(lon1d, lat1d, lon2d, lat2d float64) float64 {
	return Distance(lon1d, lat1d, lon2d, lat2d)
}
