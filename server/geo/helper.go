package geo

import "math"

// dR is D_R, (M_PI / 180.0): M_PI rounded to a double, then divided in
// double precision (Go's constant arithmetic would round the exact
// quotient, one ulp away).
var dR = func() float64 {
	pi := math.Pi
	return pi / 180.0
}()

const (
	earthRadiusInMeters = 6372797.560856
	mercatorMax         = 20037726.37
)

func degRad(ang float64) float64 { return ang * dR }
func radDeg(ang float64) float64 { return ang / dR }

// EstimateStepsByRadius is geohashEstimateStepsByRadius: the precision of
// the 9 cells of a search of that radius around that latitude.
func EstimateStepsByRadius(rangeMeters, lat float64) uint8 {
	if rangeMeters == 0 {
		return 26
	}
	step := 1
	for rangeMeters < mercatorMax {
		rangeMeters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	if step < 1 {
		step = 1
	}
	if step > 26 {
		step = 26
	}
	return uint8(step)
}

// Shape is GeoShape: a circle (Radius) or an axis-aligned box (Width,
// Height) around (Lon, Lat), in a unit Conversion meters long.
type Shape struct {
	Box                   bool
	Lon, Lat              float64
	Conversion            float64
	Radius, Width, Height float64
	// Bounds is the bounding box AreasByShape computed: min longitude,
	// min latitude, max longitude, max latitude.
	Bounds [4]float64

	// cosLat is cos of Lat in radians, once cosSet: Within's distances
	// all start at the centre.
	cosLat float64
	cosSet bool
}

// boundingBox is geohashBoundingBox.
func (s *Shape) boundingBox() {
	longitude, latitude := s.Lon, s.Lat
	var height, width float64
	if s.Box {
		height = s.Conversion * (s.Height / 2)
		width = s.Conversion * (s.Width / 2)
	} else {
		height = s.Conversion * s.Radius
		width = s.Conversion * s.Radius
	}
	latDelta := radDeg(height / earthRadiusInMeters)
	longDeltaTop := radDeg(width / earthRadiusInMeters / cos(degRad(latitude+latDelta)))
	longDeltaBottom := radDeg(width / earthRadiusInMeters / cos(degRad(latitude-latDelta)))
	if latitude < 0 {
		s.Bounds[0] = longitude - longDeltaBottom
		s.Bounds[2] = longitude + longDeltaBottom
	} else {
		s.Bounds[0] = longitude - longDeltaTop
		s.Bounds[2] = longitude + longDeltaTop
	}
	s.Bounds[1] = latitude - latDelta
	s.Bounds[3] = latitude + latDelta
}

// Radius is GeoHashRadius: the centre cell and its neighbours (a zero
// Bits for a neighbour excluded from the search).
type Radius struct {
	Hash      Bits
	Area      Area
	Neighbors Neighbors
}

// AreasByShape is geohashCalculateAreasByShapeWGS84; it sets s.Bounds.
func AreasByShape(s *Shape) Radius {
	s.boundingBox()
	minLon, minLat, maxLon, maxLat := s.Bounds[0], s.Bounds[1], s.Bounds[2], s.Bounds[3]
	longitude, latitude := s.Lon, s.Lat
	var radiusMeters float64
	if s.Box {
		radiusMeters = math.Sqrt(float64((s.Width/2)*(s.Width/2)) + float64((s.Height/2)*(s.Height/2)))
	} else {
		radiusMeters = s.Radius
	}
	radiusMeters *= s.Conversion

	steps := EstimateStepsByRadius(radiusMeters, latitude)
	hash, _ := Encode(longRangeWGS84, latRangeWGS84, longitude, latitude, steps)
	neighbors := NeighborsOf(hash)
	area, _ := Decode(longRangeWGS84, latRangeWGS84, hash)

	decreaseStep := false
	{
		north, _ := Decode(longRangeWGS84, latRangeWGS84, neighbors.North)
		south, _ := Decode(longRangeWGS84, latRangeWGS84, neighbors.South)
		east, _ := Decode(longRangeWGS84, latRangeWGS84, neighbors.East)
		west, _ := Decode(longRangeWGS84, latRangeWGS84, neighbors.West)
		if north.Latitude.Max < maxLat {
			decreaseStep = true
		}
		if south.Latitude.Min > minLat {
			decreaseStep = true
		}
		if east.Longitude.Max < maxLon {
			decreaseStep = true
		}
		if west.Longitude.Min > minLon {
			decreaseStep = true
		}
	}
	if steps > 1 && decreaseStep {
		steps--
		hash, _ = Encode(longRangeWGS84, latRangeWGS84, longitude, latitude, steps)
		neighbors = NeighborsOf(hash)
		area, _ = Decode(longRangeWGS84, latRangeWGS84, hash)
	}
	if steps >= 2 {
		if area.Latitude.Min < minLat {
			neighbors.South, neighbors.SouthWest, neighbors.SouthEast = Bits{}, Bits{}, Bits{}
		}
		if area.Latitude.Max > maxLat {
			neighbors.North, neighbors.NorthEast, neighbors.NorthWest = Bits{}, Bits{}, Bits{}
		}
		if area.Longitude.Min < minLon {
			neighbors.West, neighbors.SouthWest, neighbors.NorthWest = Bits{}, Bits{}, Bits{}
		}
		if area.Longitude.Max > maxLon {
			neighbors.East, neighbors.SouthEast, neighbors.NorthEast = Bits{}, Bits{}, Bits{}
		}
	}
	return Radius{Hash: hash, Area: area, Neighbors: neighbors}
}

// Cells are the 9 cells membersOfAllNeighbors searches, in its order:
// the centre, N, S, E, W, NE, NW, SE, SW.
func (r *Radius) Cells() [9]Bits {
	n := &r.Neighbors
	return [9]Bits{r.Hash, n.North, n.South, n.East, n.West, n.NorthEast, n.NorthWest, n.SouthEast, n.SouthWest}
}

// ScoresOfBox is scoresOfGeoHashBox: the sorted set scores [min, max) of
// the points inside the cell.
func ScoresOfBox(h Bits) (min, max uint64) {
	min = Align52(h)
	h.Bits++
	max = Align52(h)
	return min, max
}

// LatDistance is geohashGetLatDistance.
func LatDistance(lat1d, lat2d float64) float64 {
	return earthRadiusInMeters * math.Abs(degRad(lat2d)-degRad(lat1d))
}

// Distance is geohashGetDistance: the haversine great circle distance in
// meters.
func Distance(lon1d, lat1d, lon2d, lat2d float64) float64 {
	return distanceCos(lon1d, lat1d, lon2d, lat2d, cos(degRad(lat1d)), cos(degRad(lat2d)))
}

// distanceCos is Distance given cos1 = cos(degRad(lat1d)) and cos2 =
// cos(degRad(lat2d)) (the formula's own, computed once per shape by
// Within): the same operations, the same result.
func distanceCos(lon1d, lat1d, lon2d, lat2d, cos1, cos2 float64) float64 {
	lon1r := degRad(lon1d)
	lon2r := degRad(lon2d)
	v := sin((lon2r - lon1r) / 2)
	if v == 0.0 {
		return LatDistance(lat1d, lat2d)
	}
	lat1r := degRad(lat1d)
	lat2r := degRad(lat2d)
	u := sin((lat2r - lat1r) / 2)
	a := u*u + cos1*cos2*v*v
	return 2.0 * earthRadiusInMeters * asin(math.Sqrt(a))
}

// inRectangle is geohashGetDistanceIfInRectangle; cos1 is
// cos(degRad(y1)).
func inRectangle(widthM, heightM, x1, y1, x2, y2, cos1 float64) (float64, bool) {
	latDistance := LatDistance(y2, y1)
	if latDistance > heightM/2 {
		return 0, false
	}
	cos2 := cos(degRad(y2))
	lonDistance := distanceCos(x2, y2, x1, y2, cos2, cos2)
	if nearEdge(lonDistance, widthM/2) {
		lonDistance = SystemDistance(x2, y2, x1, y2)
	}
	if lonDistance > widthM/2 {
		return 0, false
	}
	return distanceCos(x1, y1, x2, y2, cos1, cos2), true
}

// nearEdge reports whether a distance lies so near a search's edge (a few
// ulps, far above the last-bit difference between the correctly rounded
// functions and glibc's) that which side it falls on is decided again with
// SystemDistance, redis-server's evaluation.
func nearEdge(d, edge float64) bool { return math.Abs(d-edge) <= edge*0x1p-46 }

// NearEqual reports whether two distances are so near (a few ulps) that
// their order could be the other way round with glibc's functions: the
// caller sorts them again after SystemDistance.
func NearEqual(a, b float64) bool { return nearEdge(a, math.Max(a, b)) }

// Within is geoWithinShape: the position of a score and its distance in
// meters from the shape's centre, ok when it lies inside the shape.
func (s *Shape) Within(score float64) (lon, lat, dist float64, ok bool) {
	lon, lat, ok = DecodeScore(score)
	if !ok {
		return 0, 0, 0, false
	}
	if !s.cosSet {
		s.cosLat, s.cosSet = cos(degRad(s.Lat)), true
	}
	if s.Box {
		dist, ok = inRectangle(s.Width*s.Conversion, s.Height*s.Conversion, s.Lon, s.Lat, lon, lat, s.cosLat)
	} else {
		// A point farther in latitude alone than the radius (with a
		// margin far above the formula's rounding) is outside: Distance
		// is never below LatDistance but by rounding.
		if LatDistance(lat, s.Lat) > s.Radius*s.Conversion*(1+1e-9) {
			return lon, lat, 0, false
		}
		dist = distanceCos(s.Lon, s.Lat, lon, lat, s.cosLat, cos(degRad(lat)))
		if nearEdge(dist, s.Radius*s.Conversion) {
			dist = SystemDistance(s.Lon, s.Lat, lon, lat)
		}
		ok = !(dist > s.Radius*s.Conversion)
	}
	return lon, lat, dist, ok
}
