package geo

// PQSort is Redis's pqsort (pqsort.c, NetBSD's qsort made partial): it
// sorts a by cmp well enough that the elements at indexes lrange..rrange
// are in their sorted places, skipping partitions outside that range. It
// is not stable: GEOSEARCH with COUNT returns equidistant points in the
// order this leaves them, so the port keeps every comparison and swap.
// As in 7.0.15, a partition that swapped nothing does not fall back to an
// insertion sort (NetBSD's swap_cnt shortcut was removed from Redis).
func PQSort[T any](a []T, cmp func(x, y *T) int, lrange, rrange int) {
	// Positions are C's byte addresses with elements es bytes wide, so the
	// range tests ("_r = a + r - 1") keep their exact meaning.
	s := &pqs[T]{a: a, cmp: cmp}
	s.sort(0, len(a), pes*lrange, pes*(rrange+1)-1)
}

type pqs[T any] struct {
	a   []T
	cmp func(x, y *T) int
}

const pes = 2

func (s *pqs[T]) c(p, q int) int { return s.cmp(&s.a[p/pes], &s.a[q/pes]) }

func (s *pqs[T]) swap(p, q int) { s.a[p/pes], s.a[q/pes] = s.a[q/pes], s.a[p/pes] }

func (s *pqs[T]) vecswap(p, q, n int) {
	for i := 0; i < n; i += pes {
		s.swap(p+i, q+i)
	}
}

func (s *pqs[T]) med3(a, b, c int) int {
	if s.c(a, b) < 0 {
		if s.c(b, c) < 0 {
			return b
		}
		if s.c(a, c) < 0 {
			return c
		}
		return a
	}
	if s.c(b, c) > 0 {
		return b
	}
	if s.c(a, c) < 0 {
		return a
	}
	return c
}

func (s *pqs[T]) insertion(a, n int) {
	for pm := a + pes; pm < a+n*pes; pm += pes {
		for pl := pm; pl > a && s.c(pl-pes, pl) > 0; pl -= pes {
			s.swap(pl, pl-pes)
		}
	}
}

// sort is _pqsort over n elements at position a; lr and rr are the byte
// positions of the range to sort.
func (s *pqs[T]) sort(a, n, lr, rr int) {
	const es = pes
	for {
		if n < 7 {
			s.insertion(a, n)
			return
		}
		pm := a + (n/2)*es
		if n > 7 {
			pl := a
			pn := a + (n-1)*es
			if n > 40 {
				d := (n / 8) * es
				pl = s.med3(pl, pl+d, pl+2*d)
				pm = s.med3(pm-d, pm, pm+d)
				pn = s.med3(pn-2*d, pn-d, pn)
			}
			pm = s.med3(pl, pm, pn)
		}
		s.swap(a, pm)
		pa, pb := a+es, a+es
		pc, pd := a+(n-1)*es, a+(n-1)*es
		for {
			for pb <= pc {
				r := s.c(pb, a)
				if r > 0 {
					break
				}
				if r == 0 {
					s.swap(pa, pb)
					pa += es
				}
				pb += es
			}
			for pb <= pc {
				r := s.c(pc, a)
				if r < 0 {
					break
				}
				if r == 0 {
					s.swap(pc, pd)
					pd -= es
				}
				pc -= es
			}
			if pb > pc {
				break
			}
			s.swap(pb, pc)
			pb += es
			pc -= es
		}
		pn := a + n*es
		r := min(pa-a, pb-pa)
		s.vecswap(a, pb-r, r)
		r = min(pd-pc, pn-pd-es)
		s.vecswap(pb, pn-r, r)
		if r = pb - pa; r > es {
			l, rt := a, a+r-1
			if !((lr < l && rr < l) || (lr > rt && rr > rt)) {
				s.sort(a, r/es, lr, rr)
			}
		}
		if r = pd - pc; r > es {
			a = pn - r
			n = r / es
			l, rt := a, a+r-1
			if !((lr < l && rr < l) || (lr > rt && rr > rt)) {
				continue
			}
		}
		return
	}
}
