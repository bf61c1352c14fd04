package integration

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// PortsEnv names the environment variable that confines the ports the
// suites pick to a range "LO-HI" instead of the kernel's ephemeral ports.
// .ci/run gives each suite it runs beside others a range of its own, below
// the ephemeral range: a port a suite holds while its server is down (killed
// to be restarted on the same port) is then never picked by another suite,
// nor taken as the source port of a connection.
const PortsEnv = "VIGIL_TEST_PORTS"

// portRange returns PortsEnv's range, ok false when it is unset.
func portRange() (lo, hi int, ok bool) {
	v := os.Getenv(PortsEnv)
	if v == "" {
		return 0, 0, false
	}
	a, b, cut := strings.Cut(v, "-")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if !cut || err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		Fail(fmt.Sprintf("%s=%q: want LO-HI", PortsEnv, v))
	}
	return lo, hi, true
}

// FreePorts returns the first of n consecutive free loopback TCP ports: from
// PortsEnv's range when it is set, else from the kernel. They are released
// before they are returned, so another process may take one first; this
// process is never handed one twice (reserve).
func FreePorts(n int) int {
	GinkgoHelper()
	lo, hi, ranged := portRange()
	for try := 0; try < 200; try++ {
		var base int
		if ranged {
			if hi-lo+1 < n {
				Fail(fmt.Sprintf("%s: no %d consecutive ports", PortsEnv, n))
			}
			base = lo + rand.IntN(hi-lo+2-n)
		} else {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			base = l.Addr().(*net.TCPAddr).Port
			Expect(l.Close()).To(Succeed())
			if base+n-1 > 65535 {
				continue
			}
		}
		if portsFree(base, n) && reserve(base, n) {
			return base
		}
	}
	Fail(fmt.Sprintf("no %d consecutive free ports", n))
	return 0
}

// portsFree reports whether ports base .. base+n-1 can be listened on.
func portsFree(base, n int) bool {
	for p := base; p < base+n; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}

// handedOut holds every port FreePorts returned in this process. A spec
// picks its ports before it starts anything on them (the drill's servers,
// then its sentinels), so a port only checked free could be picked twice,
// and two of the spec's own nodes would then fight over it.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// reserve records base .. base+n-1 as handed out; false, recording nothing,
// when one of them already was.
func reserve(base, n int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	for p := base; p < base+n; p++ {
		if handedOut.ports[p] {
			return false
		}
	}
	for p := base; p < base+n; p++ {
		handedOut.ports[p] = true
	}
	return true
}
