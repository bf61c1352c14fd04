package server

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/server/geo"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Geo commands, as Redis 7.0.15's geo.c: positions are sorted set members
// whose score is the 52-bit geohash (package geo). GEOADD is ZADD with the
// positions encoded, and propagates as that ZADD (replaceClientCommandVector);
// the searches read the 9 cells covering the shape as score ranges.

// Error replies of geo.c.
const (
	ErrGeoMember       = "ERR could not decode requested zset member"
	ErrGeoRadiusNum    = "ERR need numeric radius"
	ErrGeoRadiusNeg    = "ERR radius cannot be negative"
	ErrGeoWidthNum     = "ERR need numeric width"
	ErrGeoHeightNum    = "ERR need numeric height"
	ErrGeoBoxNeg       = "ERR height or width cannot be negative"
	ErrGeoUnit         = "ERR unsupported unit provided. please use M, KM, FT, MI"
	ErrGeoCount        = "ERR COUNT must be > 0"
	ErrGeoAnyCount     = "ERR the ANY argument requires COUNT argument"
	ErrGeoStoreWith    = "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
	ErrGeoFromOne      = "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %s"
	ErrGeoByOne        = "ERR exactly one of BYRADIUS and BYBOX can be specified for %s"
	errGeoInvalidPairF = "ERR invalid longitude,latitude pair "
)

// Flags of georadiusGeneric.
const (
	geoRadiusCoords  = 1 << iota // search around coordinates
	geoRadiusMember              // search around a member
	geoRadiusNoStore             // the _RO variants: no STORE/STOREDIST
	geoSearch                    // GEOSEARCH's arguments
	geoSearchStore               // GEOSEARCHSTORE: STOREDIST without a key
)

func init() {
	w, r, d, m := FlagWrite, FlagReadonly, FlagDenyOOM, FlagMovableKeys
	acl := func(a ...string) []string { return a }
	rd := acl("read", "geo", "slow")
	wr := acl("write", "geo", "slow")
	gr := func(flags int) Handler { return func(c *Client, a [][]byte) { georadiusGeneric(c, a, 1, flags) } }
	register(
		&Command{Name: "geoadd", Arity: -5, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, ACL: wr, Handler: cmdGeoAdd},
		&Command{Name: "geodist", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rd, Handler: cmdGeoDist},
		&Command{Name: "geohash", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rd, Handler: cmdGeoHash},
		&Command{Name: "geopos", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rd, Handler: cmdGeoPos},
		&Command{Name: "georadius", Arity: -6, Flags: w | d | m, FirstKey: 1, LastKey: 1, Step: 1, ACL: wr, Handler: gr(geoRadiusCoords)},
		&Command{Name: "georadius_ro", Arity: -6, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rd, Handler: gr(geoRadiusCoords | geoRadiusNoStore)},
		&Command{Name: "georadiusbymember", Arity: -5, Flags: w | d | m, FirstKey: 1, LastKey: 1, Step: 1, ACL: wr, Handler: gr(geoRadiusMember)},
		&Command{Name: "georadiusbymember_ro", Arity: -5, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rd, Handler: gr(geoRadiusMember | geoRadiusNoStore)},
		&Command{Name: "geosearch", Arity: -7, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rd, Handler: gr(geoSearch)},
		&Command{Name: "geosearchstore", Arity: -8, Flags: w | d, FirstKey: 1, LastKey: 2, Step: 1, ACL: wr,
			Handler: func(c *Client, a [][]byte) { georadiusGeneric(c, a, 2, geoSearch|geoSearchStore) }},
	)
}

// cFormatF is C's "%f" (also "inf", "-inf").
func cFormatF(f float64, prec int) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'f', prec, 64)
}

// extractLongLat is extractLongLatOrReply on args[0:2].
func (c *Client) extractLongLat(args [][]byte) (lon, lat float64, ok bool) {
	var xy [2]float64
	for i := 0; i < 2; i++ {
		v, ok := parseDouble(args[i])
		if !ok {
			c.w.Error(ErrNotFloat)
			return 0, 0, false
		}
		xy[i] = v
	}
	if xy[0] < geo.LongMin || xy[0] > geo.LongMax || xy[1] < geo.LatMin || xy[1] > geo.LatMax {
		c.w.Error(errGeoInvalidPairF + cFormatF(xy[0], 6) + "," + cFormatF(xy[1], 6))
		return 0, 0, false
	}
	return xy[0], xy[1], true
}

// extractUnit is extractUnitOrReply: meters per unit, or -1 after the error.
func (c *Client) extractUnit(u []byte) float64 {
	switch {
	case eqFold(u, "m"):
		return 1
	case eqFold(u, "km"):
		return 1000
	case eqFold(u, "ft"):
		return 0.3048
	case eqFold(u, "mi"):
		return 1609.34
	}
	c.w.Error(ErrGeoUnit)
	return -1
}

// extractDistance is extractDistanceOrReply on "radius unit".
func (c *Client) extractDistance(args [][]byte) (radius, conversion float64, ok bool) {
	d, ok := parseDouble(args[0])
	if !ok {
		c.w.Error(ErrGeoRadiusNum)
		return 0, 0, false
	}
	if d < 0 {
		c.w.Error(ErrGeoRadiusNeg)
		return 0, 0, false
	}
	conv := c.extractUnit(args[1])
	if conv < 0 {
		return 0, 0, false
	}
	return d, conv, true
}

// extractBox is extractBoxOrReply on "width height unit".
func (c *Client) extractBox(args [][]byte) (width, height, conversion float64, ok bool) {
	wv, ok := parseDouble(args[0])
	if !ok {
		c.w.Error(ErrGeoWidthNum)
		return 0, 0, 0, false
	}
	h, ok := parseDouble(args[1])
	if !ok {
		c.w.Error(ErrGeoHeightNum)
		return 0, 0, 0, false
	}
	if h < 0 || wv < 0 {
		c.w.Error(ErrGeoBoxNeg)
		return 0, 0, 0, false
	}
	conv := c.extractUnit(args[2])
	if conv < 0 {
		return 0, 0, 0, false
	}
	return wv, h, conv, true
}

// replyDistance is addReplyDoubleDistance: a bulk string with 4 decimals.
func (c *Client) replyDistance(d float64) { c.w.BulkString(cFormatF(d, 4)) }

// replyHumanDouble is addReplyHumanLongDouble of a double: "%.17Lf"
// without trailing zeros, a bulk string in RESP2 and a double in RESP3.
func (c *Client) replyHumanDouble(f float64) {
	var s string
	if math.IsInf(f, 0) || math.IsNaN(f) {
		s = cFormatF(f, 0)
	} else {
		s = strconv.FormatFloat(f, 'f', 17, 64)
		l := len(s)
		for l > 0 && s[l-1] == '0' {
			l--
		}
		if l > 0 && s[l-1] == '.' {
			l--
		}
		if s = s[:l]; s == "-0" {
			s = "0"
		}
	}
	if c.w.Proto >= 3 {
		c.w.Raw([]byte("," + s + "\r\n"))
		return
	}
	c.w.BulkString(s)
}

// cmdGeoAdd is geoaddCommand: ZADD key [NX|XX] [CH] score member ... with
// each position encoded as its score.
func cmdGeoAdd(c *Client, args [][]byte) {
	xx, nx := false, false
	longidx := 2
	for longidx < len(args) {
		a := args[longidx]
		if eqFold(a, "nx") {
			nx = true
		} else if eqFold(a, "xx") {
			xx = true
		} else if !eqFold(a, "ch") {
			break
		}
		longidx++
	}
	if (len(args)-longidx)%3 != 0 || (xx && nx) {
		c.w.Error(ErrSyntax)
		return
	}
	elements := (len(args) - longidx) / 3
	argv := make([][]byte, longidx+elements*2)
	argv[0] = []byte("zadd")
	copy(argv[1:], args[1:longidx])
	for i := 0; i < elements; i++ {
		lon, lat, ok := c.extractLongLat(args[longidx+i*3:])
		if !ok {
			return
		}
		argv[longidx+i*2] = strconv.AppendUint(nil, geo.Score(lon, lat), 10)
		argv[longidx+i*2+1] = args[longidx+i*3+2]
	}
	zaddGeneric(c, argv, 0)
	if c.srv.propagating() {
		c.rewriteArgv(argv...)
	}
}

// geoPoint is geo.c's geoPoint, less its position (WITHCOORD decodes
// the score again: the same values).
type geoPoint struct {
	dist, score float64
	member      string
}

// geoPointsInRange is geoGetPointsInRange: the members with scores in
// [min, max) inside the shape, appended to ga until it holds limit
// points (0: no limit).
func geoPointsInRange(z *keyspace.ZSet, min, max uint64, shape *geo.Shape, ga []geoPoint, limit int) []geoPoint {
	r := keyspace.ScoreRange{Min: float64(min), Max: float64(max), MaxEx: true}
	z.RangeByScore(r, false, 0, -1, func(member string, score float64) bool {
		if _, _, dist, ok := shape.Within(score); ok {
			ga = append(ga, geoPoint{dist: dist, score: score, member: member})
		}
		return !(len(ga) > 0 && limit > 0 && len(ga) >= limit)
	})
	return ga
}

// geoMembersOfAllNeighbors is membersOfAllNeighbors: the centre cell then
// its neighbours, skipping excluded ones and one equal to the last
// searched.
// The points are appended to ga.
func geoMembersOfAllNeighbors(z *keyspace.ZSet, n *geo.Radius, shape *geo.Shape, limit int, ga []geoPoint) []geoPoint {
	cells := n.Cells()
	last := 0
	for i, cell := range cells {
		if cell.IsZero() {
			continue
		}
		if last != 0 && cell == cells[last] {
			continue
		}
		if len(ga) > 0 && limit > 0 && len(ga) >= limit {
			break
		}
		min, max := geo.ScoresOfBox(cell)
		ga = geoPointsInRange(z, min, max, shape, ga, limit)
		last = i
	}
	return ga
}

// geoPointsPool holds the point slices of searches done (*[]geoPoint,
// empty, at most geoPointsPoolMax long): a search's points are garbage at
// its end.
var geoPointsPool = sync.Pool{New: func() any { return new([]geoPoint) }}

const geoPointsPoolMax = 1 << 16

const (
	geoSortNone = iota
	geoSortAsc
	geoSortDesc
)

// georadiusGeneric is geo.c's georadiusGeneric for GEORADIUS[BYMEMBER][_RO],
// GEOSEARCH and GEOSEARCHSTORE; src is the source key's index.
func georadiusGeneric(c *Client, args [][]byte, src int, flags int) {
	var storekey []byte
	storedist := false
	z, ok := lookupRead[*keyspace.ZSet](c, args[src])
	if !ok {
		return
	}
	var shape geo.Shape
	var baseArgs int
	switch {
	case flags&geoRadiusCoords != 0:
		baseArgs = 6
		if shape.Lon, shape.Lat, ok = c.extractLongLat(args[2:]); !ok {
			return
		}
		if shape.Radius, shape.Conversion, ok = c.extractDistance(args[baseArgs-2:]); !ok {
			return
		}
	case flags&geoRadiusMember != 0 && z == nil:
		baseArgs = 5
	case flags&geoRadiusMember != 0:
		baseArgs = 5
		if shape.Lon, shape.Lat, ok = geoMemberPos(z, args[2]); !ok {
			c.w.Error(ErrGeoMember)
			return
		}
		if shape.Radius, shape.Conversion, ok = c.extractDistance(args[baseArgs-2:]); !ok {
			return
		}
	default: // GEOSEARCH, GEOSEARCHSTORE
		baseArgs = 2
		if flags&geoSearchStore != 0 {
			baseArgs = 3
			storekey = args[1]
		}
	}

	withdist, withhash, withcoords := false, false, false
	frommember, fromloc, byradius, bybox := false, false, false, false
	sortOrder := geoSortNone
	anyFlag := false
	var count int64
	search := flags&geoSearch != 0
	noStore := flags&(geoRadiusNoStore|geoSearch) != 0
	remaining := len(args) - baseArgs
	for i := 0; i < remaining; i++ {
		arg := args[baseArgs+i]
		switch {
		case eqFold(arg, "withdist"):
			withdist = true
		case eqFold(arg, "withhash"):
			withhash = true
		case eqFold(arg, "withcoord"):
			withcoords = true
		case eqFold(arg, "any"):
			anyFlag = true
		case eqFold(arg, "asc"):
			sortOrder = geoSortAsc
		case eqFold(arg, "desc"):
			sortOrder = geoSortDesc
		case eqFold(arg, "count") && i+1 < remaining:
			n, ok := parseInt(args[baseArgs+i+1])
			if !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			if n <= 0 {
				c.w.Error(ErrGeoCount)
				return
			}
			count = n
			i++
		case eqFold(arg, "store") && i+1 < remaining && !noStore:
			storekey = args[baseArgs+i+1]
			storedist = false
			i++
		case eqFold(arg, "storedist") && i+1 < remaining && !noStore:
			storekey = args[baseArgs+i+1]
			storedist = true
			i++
		case eqFold(arg, "storedist") && search && flags&geoSearchStore != 0:
			storedist = true
		case eqFold(arg, "frommember") && i+1 < remaining && search && !fromloc:
			if z == nil {
				frommember = true
				i++
				continue
			}
			if shape.Lon, shape.Lat, ok = geoMemberPos(z, args[baseArgs+i+1]); !ok {
				c.w.Error(ErrGeoMember)
				return
			}
			frommember = true
			i++
		case eqFold(arg, "fromlonlat") && i+2 < remaining && search && !frommember:
			if shape.Lon, shape.Lat, ok = c.extractLongLat(args[baseArgs+i+1:]); !ok {
				return
			}
			fromloc = true
			i += 2
		case eqFold(arg, "byradius") && i+2 < remaining && search && !bybox:
			if shape.Radius, shape.Conversion, ok = c.extractDistance(args[baseArgs+i+1:]); !ok {
				return
			}
			shape.Box = false
			byradius = true
			i += 2
		case eqFold(arg, "bybox") && i+3 < remaining && search && !byradius:
			if shape.Width, shape.Height, shape.Conversion, ok = c.extractBox(args[baseArgs+i+1:]); !ok {
				return
			}
			shape.Box = true
			bybox = true
			i += 3
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}

	if storekey != nil && (withdist || withhash || withcoords) {
		what := "STORE option in GEORADIUS"
		if flags&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		c.w.Error(sprintf1(ErrGeoStoreWith, what))
		return
	}
	if search && !(frommember || fromloc) {
		c.w.Error(sprintf1(ErrGeoFromOne, string(args[0])))
		return
	}
	if search && !(byradius || bybox) {
		c.w.Error(sprintf1(ErrGeoByOne, string(args[0])))
		return
	}
	if anyFlag && count == 0 {
		c.w.Error(ErrGeoAnyCount)
		return
	}

	if z == nil {
		if storekey != nil {
			c.geoDeleteStore(storekey)
			c.w.Int(0)
		} else {
			c.w.ArrayLen(0)
		}
		return
	}

	if count != 0 && sortOrder == geoSortNone && !anyFlag {
		sortOrder = geoSortAsc
	}
	radius := geo.AreasByShape(&shape)
	limit := 0
	if anyFlag {
		limit = int(min(count, math.MaxInt32))
	}
	buf := geoPointsPool.Get().(*[]geoPoint)
	ga := geoMembersOfAllNeighbors(z, &radius, &shape, limit, (*buf)[:0])
	defer func(ga []geoPoint) {
		if cap(ga) <= geoPointsPoolMax {
			clear(ga) // no references to members kept
			*buf = ga[:0]
			geoPointsPool.Put(buf)
		}
	}(ga)
	if len(ga) == 0 && storekey == nil {
		c.w.ArrayLen(0)
		return
	}
	resultLength := int64(len(ga))
	returned := resultLength
	if count != 0 && count < resultLength {
		returned = count
	}
	if sortOrder != geoSortNone {
		cmp := func(a, b *geoPoint) int {
			switch {
			case a.dist > b.dist:
				return 1
			case a.dist == b.dist:
				return 0
			}
			return -1
		}
		if sortOrder == geoSortDesc {
			asc := cmp
			cmp = func(a, b *geoPoint) int { return -asc(a, b) }
		}
		if returned == resultLength {
			// glibc's qsort is a stable merge sort.
			sorted, ok := geoSortByDist(ga, sortOrder == geoSortDesc)
			if ok && geoNearTies(sorted, len(sorted)) {
				geoSystemDists(ga, &shape)
				sorted, ok = geoSortByDist(ga, sortOrder == geoSortDesc)
			}
			if ok {
				ga = sorted
			} else {
				sort.SliceStable(ga, func(i, j int) bool { return cmp(&ga[i], &ga[j]) < 0 })
			}
		} else {
			// The partial sort's result depends on the order it starts
			// from: kept, in case it has to run again (geoNearTies).
			var obuf *[]geoPoint
			if geo.SystemLibm {
				obuf = geoPointsPool.Get().(*[]geoPoint)
				*obuf = append((*obuf)[:0], ga...)
			}
			geo.PQSort(ga, cmp, 0, int(returned-1))
			if obuf != nil {
				if geoNearTies(ga, int(returned)) {
					copy(ga, *obuf)
					geoSystemDists(ga, &shape)
					geo.PQSort(ga, cmp, 0, int(returned-1))
				}
				if cap(*obuf) <= geoPointsPoolMax {
					clear(*obuf)
					*obuf = (*obuf)[:0]
					geoPointsPool.Put(obuf)
				}
			}
		}
	}

	if storekey == nil {
		optionLength := 0
		for _, f := range []bool{withdist, withcoords, withhash} {
			if f {
				optionLength++
			}
		}
		c.w.ArrayLen(int(returned))
		for i := range ga[:returned] {
			gp := &ga[i]
			gp.dist /= shape.Conversion
			if optionLength > 0 {
				c.w.ArrayLen(optionLength + 1)
			}
			c.w.BulkString(gp.member)
			if withdist {
				c.replyDistance(gp.dist)
			}
			if withhash {
				c.w.Int(geoCvtLL(gp.score))
			}
			if withcoords {
				lon, lat, _ := geo.DecodeScore(gp.score)
				c.w.ArrayLen(2)
				c.replyHumanDouble(lon)
				c.replyHumanDouble(lat)
			}
		}
		return
	}

	if returned == 0 {
		c.geoDeleteStore(storekey)
		c.w.Int(0)
		return
	}
	out := keyspace.NewZSet(false)
	for i := range ga[:returned] {
		gp := &ga[i]
		score := gp.score
		if storedist {
			// All 17 digits show here: the distance again with the
			// system's libm, as redis-server computes it (geo.SystemDistance).
			if geo.SystemLibm {
				if lon, lat, ok := geo.DecodeScore(gp.score); ok {
					gp.dist = geo.SystemDistance(shape.Lon, shape.Lat, lon, lat)
				}
			}
			score = gp.dist / shape.Conversion
		}
		// A copy: gp.member views the source's buffer when it is a
		// listpack, which ZADD and ZREM write in place, and out, a
		// skiplist, keeps the strings it is given.
		out.Set(strings.Clone(gp.member), score)
	}
	out.ConvertToListpackIfNeeded(c.srv.ks.Encodings)
	c.storeZSet(storekey, out)
	ev := "georadiusstore"
	if search {
		ev = "geosearchstore"
	}
	c.notify(configs.NotifyZset, ev, storekey)
	c.srv.ks.Dirty += returned
	c.w.Int(returned)
}

// geoNearTies reports, in a build that computes distances with the system's
// libm where it matters (geo.SystemLibm), whether the first k points of ga,
// sorted, hold two at different positions whose distances are a few ulps
// apart, or the k-th has such a neighbour among the rest: their order (or
// which of them COUNT keeps) could then be the other way round with
// redis-server's glibc, and the caller sorts again on geoSystemDists.
func geoNearTies(ga []geoPoint, k int) bool {
	if !geo.SystemLibm || k == 0 {
		return false
	}
	near := func(a, b *geoPoint) bool { return a.score != b.score && geo.NearEqual(a.dist, b.dist) }
	for i := 1; i < k; i++ {
		if near(&ga[i-1], &ga[i]) {
			return true
		}
	}
	for i := k; i < len(ga); i++ {
		if near(&ga[k-1], &ga[i]) {
			return true
		}
	}
	return false
}

// geoSystemDists sets every point's distance to geo.SystemDistance's.
func geoSystemDists(ga []geoPoint, shape *geo.Shape) {
	for i := range ga {
		if lon, lat, ok := geo.DecodeScore(ga[i].score); ok {
			ga[i].dist = geo.SystemDistance(shape.Lon, shape.Lat, lon, lat)
		}
	}
}

// geoSortByDist sorts ga by distance, ascending or descending, equal
// distances in their order (what a stable sort gives): the keys sorted are
// (distance, index) pairs, without pointers to move or scan. It reports
// false when a distance is NaN (the comparator is then no order: the
// caller's stable sort decides).
func geoSortByDist(ga []geoPoint, desc bool) ([]geoPoint, bool) {
	type key struct {
		dist float64
		i    int
	}
	keys := make([]key, len(ga))
	for i := range ga {
		if math.IsNaN(ga[i].dist) {
			return nil, false
		}
		keys[i] = key{ga[i].dist, i}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.dist != b.dist {
			if (a.dist < b.dist) != desc {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.i, b.i)
	})
	sorted := make([]geoPoint, len(ga))
	for j, k := range keys {
		sorted[j] = ga[k.i]
	}
	return sorted, true
}

// geoCvtLL is C's (long long) conversion of a double on x86-64.
func geoCvtLL(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// geoDeleteStore is the empty result of a STORE: the destination deleted.
func (c *Client) geoDeleteStore(dst []byte) {
	c.selectedDB().LookupNoTouch(dst, c.srv.nowMs)
	if c.selectedDB().Delete(dst) {
		c.touch(dst)
		c.notify(configs.NotifyGeneric, "del", dst)
		c.srv.ks.Dirty++
	}
}

// geoMemberPos is longLatFromMember.
func geoMemberPos(z *keyspace.ZSet, member []byte) (lon, lat float64, ok bool) {
	score, ok := z.Score(member)
	if !ok {
		return 0, 0, false
	}
	return geo.DecodeScore(score)
}

// cmdGeoHash is geohashCommand.
func cmdGeoHash(c *Client, args [][]byte) {
	z, ok := lookupRead[*keyspace.ZSet](c, args[1])
	if !ok {
		return
	}
	c.w.ArrayLen(len(args) - 2)
	for _, m := range args[2:] {
		var h string
		ok := false
		if z != nil {
			if score, found := z.Score(m); found {
				h, ok = geo.Hash(score)
			}
		}
		if ok {
			c.w.BulkString(h)
		} else {
			c.w.Null()
		}
	}
}

// cmdGeoPos is geoposCommand.
func cmdGeoPos(c *Client, args [][]byte) {
	z, ok := lookupRead[*keyspace.ZSet](c, args[1])
	if !ok {
		return
	}
	c.w.ArrayLen(len(args) - 2)
	for _, m := range args[2:] {
		var lon, lat float64
		ok := false
		if z != nil {
			lon, lat, ok = geoMemberPos(z, m)
		}
		if !ok {
			c.w.NullArray()
			continue
		}
		c.w.ArrayLen(2)
		c.replyHumanDouble(lon)
		c.replyHumanDouble(lat)
	}
}

// cmdGeoDist is geodistCommand.
func cmdGeoDist(c *Client, args [][]byte) {
	toMeter := 1.0
	if len(args) == 5 {
		if toMeter = c.extractUnit(args[4]); toMeter < 0 {
			return
		}
	} else if len(args) > 5 {
		c.w.Error(ErrSyntax)
		return
	}
	e := c.lookupKeyRead(args[1])
	if e == nil {
		c.w.Null()
		return
	}
	z, ok := valueAs[*keyspace.ZSet](c, e)
	if !ok {
		return
	}
	s1, ok1 := z.Score(args[2])
	s2, ok2 := z.Score(args[3])
	if !ok1 || !ok2 {
		c.w.Null()
		return
	}
	lon1, lat1, ok1 := geo.DecodeScore(s1)
	lon2, lat2, ok2 := geo.DecodeScore(s2)
	if !ok1 || !ok2 {
		c.w.Null()
		return
	}
	c.replyDistance(geo.Distance(lon1, lat1, lon2, lat2) / toMeter)
}
