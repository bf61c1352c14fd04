package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestListCompressDifferential (interop): lists created under
// list-compress-depth 1, 2 and 3 go through a random stream of list
// commands (pushes, pops with counts, LTRIM, LMOVE, LINSERT with node
// splits and merges, LSET, LREM, LRANGE, LINDEX; compressible and
// incompressible elements) on Vigil's test server and on redis-server
// 7.0.15; after every command MEMORY USAGE (sampled and SAMPLES 0), DEBUG
// OBJECT (ql_compressed, ql_nodes, serializedlength, ...) and the DUMP
// payload, which carries every node raw or as the LZF blob Redis holds,
// must be Redis's byte for byte. CONFIG SET list-compress-depth midway
// changes new lists only.
func TestListCompressDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	d := newListDiff(t)
	ts, c, rc, rbr := d.ts, d.c, d.rc, d.rbr
	rng := rand.New(rand.NewPCG(11, 22))
	var before string
	do := func(args ...string) string {
		t.Helper()
		if args[0] == "LINSERT" {
			before = dumpNodes(ts.do(c, "DUMP", args[1]))
		}
		got, want := d.run(args...)
		if got != want && args[0] == "DUMP" {
			g, w := strings.Fields(dumpNodes(got)), strings.Fields(dumpNodes(want))
			got, want = strconv.Itoa(len(g))+" nodes:", strconv.Itoa(len(w))+" nodes:"
			for i := range max(len(g), len(w)) {
				if i >= len(g) || i >= len(w) || g[i] != w[i] {
					got += " " + strconv.Itoa(i) + ":" + strings.Join(g[max(0, i-1):min(len(g), i+2)], ",")
					want += " " + strconv.Itoa(i) + ":" + strings.Join(w[max(0, i-1):min(len(w), i+2)], ",")
				}
			}
		}
		if got != want {
			t.Logf("before the last LINSERT: %s", before)
			t.Fatalf("%.80q:\n vigil %.300q\n redis %.300q\nlast commands:\n%s", args, got, want, d.last(15))
		}
		return got
	}
	letters := "abcdefghijklmnopqrstuvwxyz0123456789"
	elem := func() string {
		switch rng.IntN(8) {
		case 0:
			return strings.Repeat("v", rng.IntN(2000))
		case 1:
			return strconv.Itoa(rng.IntN(100000) - 50000)
		case 2: // does not compress
			b := make([]byte, 1+rng.IntN(120))
			for i := range b {
				b[i] = letters[rng.IntN(len(letters))]
			}
			return string(b)
		}
		return "element-" + strings.Repeat("e", rng.IntN(40)) + strconv.Itoa(rng.IntN(20))
	}
	check := func(k string) {
		t.Helper()
		if do("EXISTS", k) == ":0\r\n" {
			return
		}
		d := do("DUMP", k)
		do("DEBUG", "OBJECT", k)
		if got, want := ts.do(c, "MEMORY", "USAGE", k, "SAMPLES", "0"), rawDo(t, rc, rbr, "MEMORY", "USAGE", k, "SAMPLES", "0"); got != want {
			t.Logf("nodes %s", dumpNodes(d))
		}
		do("MEMORY", "USAGE", k, "SAMPLES", "0")
		do("MEMORY", "USAGE", k)
		do("DEBUG", "OBJECT", k)
	}
	// Without rdbcompression a DUMP writes raw nodes raw and the nodes
	// held compressed as their LZF blobs: it shows each node's state.
	do("CONFIG", "SET", "rdbcompression", "no")
	listRead := func(k string) []string {
		switch rng.IntN(5) {
		case 0:
			return []string{"LRANGE", k, strconv.Itoa(rng.IntN(200) - 100), strconv.Itoa(rng.IntN(200) - 100)}
		case 1:
			return []string{"LINDEX", k, strconv.Itoa(rng.IntN(200) - 100)}
		case 2:
			args := []string{"LPOS", k, elem(), "RANK", strconv.Itoa([]int{1, 2, -1, -3}[rng.IntN(4)])}
			if rng.IntN(2) == 0 {
				args = append(args, "COUNT", strconv.Itoa(rng.IntN(3)))
			}
			if rng.IntN(2) == 0 {
				args = append(args, "MAXLEN", strconv.Itoa(rng.IntN(100)))
			}
			return args
		case 3:
			return []string{"LINSERT", k, "BEFORE", "no-such-pivot", elem()}
		}
		return []string{"LRANGE", k, "0", "-1"}
	}
	mix := listMix{push: 4, pop: 2, trim: 1, move: 1, edit: 4, maxPush: 40, maxPop: 30, maxTrim: 20, maxIndex: 100,
		extra: []func(k string) []string{
			func(k string) []string { return []string{"LLEN", k} },
			func(string) []string { return []string{"RPOPLPUSH", "q", "p"} },
			// Reads walk the list: their iterator compresses the raw nodes
			// it leaves, as quicklistNext and quicklistReleaseIterator do.
			listRead, listRead, listRead,
		}}
	for _, depth := range []string{"1", "2", "3"} {
		for _, fill := range []string{"-2", "5"} {
			do("CONFIG", "SET", "list-compress-depth", depth)
			do("CONFIG", "SET", "list-max-listpack-size", fill)
			do("FLUSHALL")
			for i := 0; i < 500; i++ {
				if i == 250 { // lists created before keep their depth
					do("CONFIG", "SET", "list-compress-depth", "0")
				}
				k := []string{"p", "q", "r"}[rng.IntN(3)]
				do(mix.command(ts, rng, k, elem)...)
				for _, k := range []string{"p", "q", "r"} {
					check(k)
				}
			}
		}
	}
	do("CONFIG", "SET", "list-compress-depth", "0")
	do("CONFIG", "SET", "list-max-listpack-size", "-2")
	do("CONFIG", "SET", "rdbcompression", "yes")
}

// dumpNodes describes the nodes of a DUMP reply of a QUICKLIST_2 list:
// each node's listpack bytes (a PLAIN node's element bytes, "plain:"
// first), and the LZF bytes of a compressed one.
func dumpNodes(reply string) string {
	_, p, ok := strings.Cut(reply, "\r\n")
	if !ok || len(p) < 2 || p[0] != 18 {
		return reply
	}
	b := []byte(p[1:])
	readLen := func() (int, bool) {
		if len(b) == 0 {
			return 0, false
		}
		switch b[0] >> 6 {
		case 0:
			n := int(b[0] & 63)
			b = b[1:]
			return n, true
		case 1:
			n := int(b[0]&63)<<8 | int(b[1])
			b = b[2:]
			return n, true
		case 2:
			n := int(b[1])<<24 | int(b[2])<<16 | int(b[3])<<8 | int(b[4])
			b = b[5:]
			return n, true
		}
		b = b[1:]
		return -1, true // LZF
	}
	var out []string
	n, _ := readLen()
	for i := 0; i < n; i++ {
		plain := ""
		if c, _ := readLen(); c == 1 { // QUICKLIST_NODE_CONTAINER_PLAIN
			plain = "plain:"
		}
		l, ok := readLen()
		if !ok {
			break
		}
		if l < 0 {
			cl, _ := readLen()
			ul, _ := readLen()
			out = append(out, plain+strconv.Itoa(ul)+"/lzf"+strconv.Itoa(cl))
			b = b[cl:]
			continue
		}
		out = append(out, plain+strconv.Itoa(l))
		b = b[l:]
	}
	return strings.Join(out, " ")
}

// TestListCompressMemoryVsRedis (interop): MEMORY USAGE of long lists
// created under list-compress-depth 1 (and the same lists at depth 0)
// equals redis-server 7.0.15's at several lengths, as do DEBUG OBJECT's
// quicklist fields; a list keeps the depth it was created with after
// CONFIG SET list-compress-depth 0. The figures are logged.
func TestListCompressMemoryVsRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	d := newListDiff(t)
	same := d.same
	num := func(reply string) string { return strings.TrimSpace(strings.TrimPrefix(reply, ":")) }
	for _, n := range []int{1000, 10000, 100000} {
		for _, depth := range []string{"0", "1"} {
			key := "list:" + strconv.Itoa(n) + ":" + depth
			same("CONFIG", "SET", "list-compress-depth", depth)
			for i := 0; i < n; i += 1000 {
				args := []string{"RPUSH", key}
				for j := i; j < min(n, i+1000); j++ {
					args = append(args, "user:"+strconv.Itoa(j%5000)+":event:"+strconv.Itoa(j))
				}
				same(args...)
			}
		}
		same("CONFIG", "SET", "list-compress-depth", "0") // the lists keep theirs
		k0, k1 := "list:"+strconv.Itoa(n)+":0", "list:"+strconv.Itoa(n)+":1"
		d := same("DEBUG", "OBJECT", k1)
		if !strings.Contains(d, "ql_compressed:1") {
			t.Errorf("%s: %s", k1, d)
		}
		same("DEBUG", "OBJECT", k0)
		u0, u1 := same("MEMORY", "USAGE", k0), same("MEMORY", "USAGE", k1)
		a0, a1 := same("MEMORY", "USAGE", k0, "SAMPLES", "0"), same("MEMORY", "USAGE", k1, "SAMPLES", "0")
		t.Logf("%d elements: MEMORY USAGE depth 0 %s, depth 1 %s (SAMPLES 0: %s, %s), Vigil and redis-server alike",
			n, num(u0), num(u1), num(a0), num(a1))
	}
}
