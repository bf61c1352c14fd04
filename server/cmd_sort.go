package server

import (
	"bytes"
	"math"
	"math/big"
	"sort"
	"strconv"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/acl"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// SORT and SORT_RO, as Redis 7.0's sort.c (sortCommandGeneric).

// sortCmd and sortROCmd are the table entries, for the ACL check of BY and
// GET patterns.
var sortCmd, sortROCmd *Command

func init() {
	a := func(s ...string) []string { return s }
	sortCmd = &Command{Name: "sort", Arity: -2, Flags: FlagWrite | FlagDenyOOM | FlagMovableKeys, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: a("write", "set", "sortedset", "list", "slow", "dangerous"), Handler: cmdSort}
	sortROCmd = &Command{Name: "sort_ro", Arity: -2, Flags: FlagReadonly | FlagMovableKeys, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: a("read", "set", "sortedset", "list", "slow", "dangerous"), Handler: cmdSortRO}
	register(sortCmd, sortROCmd)
}

func cmdSort(c *Client, args [][]byte)   { c.sortGeneric(args, false) }
func cmdSortRO(c *Client, args [][]byte) { c.sortGeneric(args, true) }

// sortGetKeys is sort.c's sortGetKeys (COMMAND GETKEYS, the ACL): the key
// to sort and the last STORE destination, with its option skipping as is
// (an option's arguments are skipped one too many, so `LIMIT 0 1 STORE d`
// reports no destination, as in Redis 7.0).
func sortGetKeys(argv [][]byte) []keyRef {
	keys := []keyRef{{pos: 1, flags: []string{"RO", "access"}}}
	store := 0
	skips := []struct {
		name string
		skip int
	}{{"limit", 2}, {"get", 1}, {"by", 1}}
	for i := 2; i < len(argv); i++ {
		for _, s := range skips {
			if eqFold(cstr(argv[i]), s.name) {
				i += s.skip
				break
			} else if eqFold(cstr(argv[i]), "store") && i+1 < len(argv) {
				store = i + 1
				break
			}
		}
	}
	if store > 0 {
		keys = append(keys, keyRef{pos: store, flags: []string{"OW", "update"}})
	}
	return keys
}

// sortFullKeyAccess is ACLUserCheckCmdWithUnrestrictedKeyAccess with
// CMD_KEY_ACCESS: BY and GET patterns read keys no key spec names, so
// they need read access to every key. Internal clients (the AOF loader,
// the master) have no user and may do anything.
func (c *Client) sortFullKeyAccess(cmd *Command, args [][]byte) bool {
	if c.aofClient || c.kind() == kindMaster {
		return true
	}
	u := c.aclUserOrDefault()
	if u.Unrestricted() {
		return true
	}
	id, ok := c.srv.acl.Table().Lookup(cmd.FullName())
	if !ok {
		return true
	}
	return u.CheckUnrestrictedKeys(id, cmd.Has(FlagNoAuth), args, aclKeys(cmd, args), acl.KeyRead)
}

// sortItem is redisSortObject: an element and its weight, a score or
// (ALPHA BY) the compared value (cmp; hasCmp false for a missing key).
type sortItem struct {
	obj    []byte
	score  float64
	cmp    []byte
	hasCmp bool
}

// sortFlags are server.sort_desc, sort_alpha, sort_bypattern, sort_store.
type sortFlags struct{ desc, alpha, byPattern, store bool }

// compare is sortCompare.
func (f sortFlags) compare(a, b *sortItem) int {
	var cmp int
	switch {
	case !f.alpha:
		switch {
		case a.score > b.score:
			cmp = 1
		case a.score < b.score:
			cmp = -1
		default:
			// Equal scores: compareStringObjects, so the result is
			// deterministic.
			cmp = bytes.Compare(a.obj, b.obj)
		}
	case f.byPattern:
		switch {
		case !a.hasCmp || !b.hasCmp:
			switch {
			case a.hasCmp == b.hasCmp:
				cmp = 0
			case !a.hasCmp:
				cmp = -1
			default:
				cmp = 1
			}
		case f.store:
			cmp = bytes.Compare(a.cmp, b.cmp)
		default:
			cmp = collate(a.cmp, b.cmp)
		}
	case f.store:
		cmp = bytes.Compare(a.obj, b.obj)
	default:
		cmp = collate(a.obj, b.obj)
	}
	if f.desc {
		return -cmp
	}
	return cmp
}

// collate is strcoll in the C (or C.UTF-8) locale: bytes compared as
// unsigned up to the first NUL of each.
func collate(a, b []byte) int { return bytes.Compare(cstr(a), cstr(b)) }

// sortLookup is lookupKeyByPattern: "#" is the element itself; otherwise
// the first '*' of pattern is replaced by subst and the key read (a
// string; with "->field" after the '*', that field of a hash). ok is false
// for a pattern without '*', a missing key or field, or another type.
func (c *Client) sortLookup(pattern, subst []byte) (val []byte, ok bool) {
	if len(pattern) > 0 && pattern[0] == '#' && (len(pattern) == 1 || pattern[1] == 0) {
		return subst, true
	}
	cpat := cstr(pattern)
	p := bytes.IndexByte(cpat, '*')
	if p < 0 {
		return nil, false
	}
	fieldlen := 0
	var field []byte
	if f := bytes.Index(cpat[p+1:], []byte("->")); f >= 0 {
		f += p + 1
		if f+2 < len(pattern) && pattern[f+2] != 0 {
			fieldlen = len(pattern) - f - 2
			field = pattern[f+2:]
		}
	}
	postfixlen := len(pattern) - (p + 1)
	if fieldlen > 0 {
		postfixlen -= fieldlen + 2
	}
	key := make([]byte, 0, p+len(subst)+postfixlen)
	key = append(append(append(key, pattern[:p]...), subst...), pattern[p+1:p+1+postfixlen]...)
	e := c.lookupKeyRead(key)
	if e == nil {
		return nil, false
	}
	if fieldlen > 0 {
		h, isHash := e.Value().(*keyspace.Hash)
		if !isHash {
			return nil, false
		}
		v, found := h.Get(field, c.selectedDB().InPlace(e))
		if !found {
			return nil, false
		}
		return []byte(v), true
	}
	s, isString := e.Value().(*keyspace.String)
	if !isString {
		return nil, false
	}
	return s.Bytes(), true
}

// sortStrtod is SORT's score conversion: C's strtod over the whole value
// (up to a NUL), failing as Redis does on trailing characters, NaN and
// ERANGE (overflow, and underflow to zero or to an inexact subnormal).
func sortStrtod(b []byte) (float64, bool) {
	s := cstr(b)
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	s = s[i:]
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	sign := 1.0
	if neg {
		sign = -1
	}
	lower := bytes.ToLower(s)
	switch {
	case len(s) == 0:
		// Nothing converted: strtod returns 0 and points at the start,
		// which is the end of the string only for an empty one.
		return 0, len(cstr(b)) == 0
	case string(lower) == "inf" || string(lower) == "infinity":
		return math.Inf(int(sign)), true
	case bytes.HasPrefix(lower, []byte("nan")):
		return math.NaN(), false
	}
	hex := len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	digits := s
	isDigit := func(ch byte) bool { return ch >= '0' && ch <= '9' }
	if hex {
		digits = s[2:]
		isDigit = func(ch byte) bool {
			return ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F'
		}
	}
	// mantissa: digits [. digits], at least one digit
	j, nd, nonzero := 0, 0, false
	for j < len(digits) && isDigit(digits[j]) {
		nonzero = nonzero || digits[j] != '0'
		j, nd = j+1, nd+1
	}
	if j < len(digits) && digits[j] == '.' {
		j++
		for j < len(digits) && isDigit(digits[j]) {
			nonzero = nonzero || digits[j] != '0'
			j, nd = j+1, nd+1
		}
	}
	if nd == 0 {
		return 0, false // "0x" converts "0" and stops at 'x'; "." converts nothing
	}
	expCh := byte('e')
	if hex {
		expCh = 'p'
	}
	if j < len(digits) && (digits[j]|0x20) == expCh {
		k := j + 1
		if k < len(digits) && (digits[k] == '+' || digits[k] == '-') {
			k++
		}
		if k == len(digits) || !('0' <= digits[k] && digits[k] <= '9') {
			return 0, false // the exponent is not converted: trailing characters
		}
		for k < len(digits) && '0' <= digits[k] && digits[k] <= '9' {
			k++
		}
		j = k
	} else if hex {
		digits = append(append([]byte(nil), digits[:j]...), "p0"...)
		j = len(digits)
	}
	if j != len(digits) {
		return 0, false
	}
	text := string(digits)
	if hex {
		text = "0x" + text
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, false // overflow (ERANGE) or a form Go rejects
	}
	if nonzero && math.Abs(v) < 0x1p-1022 {
		// Underflow: glibc sets ERANGE unless the subnormal is exact.
		if v == 0 {
			return 0, false
		}
		f, _, err := big.ParseFloat(text, 0, 4096, big.ToNearestEven)
		if err != nil {
			return 0, false
		}
		if _, acc := f.Float64(); acc != big.Exact {
			return 0, false
		}
	}
	return sign * v, true
}

type sortOp struct{ pattern []byte }

// sortGeneric is sortCommandGeneric.
func (c *Client) sortGeneric(args [][]byte, readonly bool) {
	var (
		desc, alpha, dontsort bool
		limitStart            int64
		limitCount            int64 = -1
		sortby, storekey      []byte
		ops                   []sortOp
	)
	cmd := sortCmd
	if readonly {
		cmd = sortROCmd
	}
	fullAccess := c.sortFullKeyAccess(cmd, args)
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		opt := cstr(args[j])
		switch {
		case eqFold(opt, "asc"):
			desc = false
		case eqFold(opt, "desc"):
			desc = true
		case eqFold(opt, "alpha"):
			alpha = true
		case eqFold(opt, "limit") && left >= 2:
			var ok bool
			if limitStart, ok = parseInt(args[j+1]); !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			if limitCount, ok = parseInt(args[j+2]); !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			j += 2
		case !readonly && eqFold(opt, "store") && left >= 1:
			storekey = args[j+1]
			j++
		case eqFold(opt, "by") && left >= 1:
			sortby = args[j+1]
			if bytes.IndexByte(cstr(sortby), '*') < 0 {
				dontsort = true
			} else if !fullAccess {
				c.w.Error("ERR BY option of SORT denied due to insufficient ACL permissions.")
				return
			}
			j++
		case eqFold(opt, "get") && left >= 1:
			if !fullAccess {
				c.w.Error("ERR GET option of SORT denied due to insufficient ACL permissions.")
				return
			}
			ops = append(ops, sortOp{pattern: args[j+1]})
			j++
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}

	key := args[1]
	e := c.lookupKeyRead(key)
	var val keyspace.Value
	if e != nil {
		val = e.Value()
		switch val.(type) {
		case *keyspace.List, *keyspace.Set, *keyspace.ZSet:
		default:
			c.w.Error(ErrWrongType)
			return
		}
	} else {
		val = keyspace.NewList(c.srv.ks.Encodings.ListMaxListpackSize)
	}

	// A set's order is the hash table's: with nothing to sort by, sort
	// it anyway (ALPHA) when the result is stored or a script reads it,
	// so that replicas and the AOF get the same result.
	if _, isSet := val.(*keyspace.Set); dontsort && isSet && (storekey != nil || c.inScript) {
		dontsort, alpha, sortby = false, true, nil
	}

	// zsetConvert(OBJ_ENCODING_SKIPLIST): SORT converts a listpack sorted
	// set for good, even SORT_RO.
	if z, ok := val.(*keyspace.ZSet); ok && z.IsListpack() {
		z = c.selectedDB().Mutable(key, e).(*keyspace.ZSet)
		z.ConvertToSkiplist()
		val = z
	}

	var vectorlen int
	switch v := val.(type) {
	case *keyspace.List:
		vectorlen = v.Len()
	case *keyspace.Set:
		vectorlen = v.Len()
	case *keyspace.ZSet:
		vectorlen = v.Len()
	}

	n := int64(vectorlen)
	start := min(max(limitStart, 0), n)
	limitCount = min(max(limitCount, -1), n)
	end := n - 1
	if limitCount >= 0 {
		end = start + limitCount - 1
	}
	if start >= n {
		start, end = n-1, n-2
	}
	if end >= n {
		end = n - 1
	}

	_, isList := val.(*keyspace.List)
	_, isZSet := val.(*keyspace.ZSet)
	if (isList || isZSet) && dontsort && (start != 0 || end != n-1) {
		vectorlen = int(end - start + 1)
	}

	vector := make([]sortItem, 0, max(vectorlen, 0))
	switch v := val.(type) {
	case *keyspace.List:
		if dontsort {
			if end >= start {
				i, step := int(start), 1
				if desc {
					i, step = v.Len()-int(start)-1, -1
				}
				for ; len(vector) < vectorlen && i >= 0 && i < v.Len(); i += step {
					vector = append(vector, sortItem{obj: v.Index(i)})
				}
				end -= start
				start = 0
			}
		} else {
			for i := 0; i < v.Len(); i++ {
				vector = append(vector, sortItem{obj: v.Index(i)})
			}
		}
	case *keyspace.Set:
		v.Range(func(m keyspace.Member) bool {
			vector = append(vector, sortItem{obj: m.AppendTo(nil)})
			return true
		})
	case *keyspace.ZSet:
		if dontsort {
			if vectorlen > 0 {
				v.ByRank(int(start), int(start)+vectorlen-1, desc, func(m string, _ float64) bool {
					vector = append(vector, sortItem{obj: []byte(m)})
					return true
				})
			}
			end -= start
			start = 0
		} else {
			// Redis walks the zset's dict, in hash order; the skiplist's
			// order is as good a starting point for the sort.
			v.ForEach(func(m string, _ float64) bool {
				vector = append(vector, sortItem{obj: []byte(m)})
				return true
			})
		}
	}

	convErr := false
	if !dontsort {
		for j := range vector {
			it := &vector[j]
			byval := it.obj
			if sortby != nil {
				v, ok := c.sortLookup(sortby, it.obj)
				if !ok {
					continue
				}
				byval = v
			}
			if alpha {
				if sortby != nil {
					it.cmp, it.hasCmp = byval, true
				}
			} else if f, ok := sortStrtod(byval); ok {
				it.score = f
			} else {
				convErr = true
			}
		}
		flags := sortFlags{desc: desc, alpha: alpha, byPattern: sortby != nil, store: storekey != nil}
		if sortby != nil && (start != 0 || end != int64(len(vector))-1) {
			pqsort(vector, flags.compare, int(start), int(end))
		} else {
			sort.SliceStable(vector, func(a, b int) bool { return flags.compare(&vector[a], &vector[b]) < 0 })
		}
	}

	count := end - start + 1
	outputlen := count
	if len(ops) > 0 {
		outputlen = int64(len(ops)) * count
	}
	switch {
	case convErr:
		c.w.Error("ERR One or more scores can't be converted into double")
	case storekey == nil:
		c.w.ArrayLen(int(outputlen))
		for j := start; j <= end; j++ {
			if len(ops) == 0 {
				c.w.Bulk(vector[j].obj)
			}
			for _, op := range ops {
				if v, ok := c.sortLookup(op.pattern, vector[j].obj); ok {
					c.w.Bulk(v)
				} else {
					c.w.Null()
				}
			}
		}
	default:
		out := keyspace.NewList(c.srv.ks.Encodings.ListMaxListpackSize)
		out.SetPackedThreshold(c.srv.dbg.packedThreshold)
		for j := start; j <= end; j++ {
			if len(ops) == 0 {
				out.PushBack(append([]byte{}, vector[j].obj...))
			}
			for _, op := range ops {
				v, _ := c.sortLookup(op.pattern, vector[j].obj)
				out.PushBack(append([]byte{}, v...))
			}
		}
		if outputlen > 0 {
			exists := c.lookupKeyWrite(storekey) != nil
			c.selectedDB().SetNew(storekey, out, c.srv.nowMs)
			if !exists {
				c.notify(configs.NotifyNew, "new", storekey)
			}
			c.touch(storekey)
			c.notify(configs.NotifyList, "sortstore", storekey)
			c.srv.ks.Dirty += outputlen
		} else if c.selectedDB().Delete(storekey) {
			c.touch(storekey)
			c.notify(configs.NotifyGeneric, "del", storekey)
			c.srv.ks.Dirty++
		}
		c.w.Int(outputlen)
	}
}

// pqsort is Redis's pqsort.c (NetBSD's qsort, Bentley & McIlroy, made to
// sort only the partitions that overlap the ranks lrange..rrange): SORT BY
// with LIMIT uses it, and the order it leaves equal elements in is part
// of SORT's reply.
func pqsort(a []sortItem, cmp func(x, y *sortItem) int, lrange, rrange int) {
	pqsortRange(a, 0, len(a), cmp, lrange, rrange)
}

func pqsortRange(v []sortItem, base, n int, cmp func(x, y *sortItem) int, lr, rr int) {
	c := func(i, j int) int { return cmp(&v[i], &v[j]) }
	swap := func(i, j int) { v[i], v[j] = v[j], v[i] }
	vecswap := func(i, j, k int) {
		for ; k > 0; k-- {
			swap(i, j)
			i, j = i+1, j+1
		}
	}
	med3 := func(x, y, z int) int {
		if c(x, y) < 0 {
			if c(y, z) < 0 {
				return y
			}
			if c(x, z) < 0 {
				return z
			}
			return x
		}
		if c(y, z) > 0 {
			return y
		}
		if c(x, z) < 0 {
			return x
		}
		return z
	}
	insertion := func() {
		for pm := base + 1; pm < base+n; pm++ {
			for pl := pm; pl > base && c(pl-1, pl) > 0; pl-- {
				swap(pl, pl-1)
			}
		}
	}
	for {
		if n < 7 {
			insertion()
			return
		}
		pm := base + n/2
		if n > 7 {
			pl, pn := base, base+n-1
			if n > 40 {
				d := n / 8
				pl = med3(pl, pl+d, pl+2*d)
				pm = med3(pm-d, pm, pm+d)
				pn = med3(pn-2*d, pn-d, pn)
			}
			pm = med3(pl, pm, pn)
		}
		swap(base, pm)
		pa, pb := base+1, base+1
		pc, pd := base+n-1, base+n-1
		swapped := false
		for {
			for pb <= pc {
				r := c(pb, base)
				if r > 0 {
					break
				}
				if r == 0 {
					swapped = true
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				r := c(pc, base)
				if r < 0 {
					break
				}
				if r == 0 {
					swapped = true
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			swapped = true
			pb++
			pc--
		}
		if !swapped {
			insertion()
			return
		}
		pn := base + n
		r := min(pa-base, pb-pa)
		vecswap(base, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		vecswap(pb, pn-r, r)
		outside := func(b, k int) bool { return (lr < b && rr < b) || (lr >= b+k && rr >= b+k) }
		if r = pb - pa; r > 1 && !outside(base, r) {
			pqsortRange(v, base, r, cmp, lr, rr)
		}
		if r = pd - pc; r > 1 {
			base, n = pn-r, r
			if !outside(base, n) {
				continue
			}
		}
		return
	}
}
