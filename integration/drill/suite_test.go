package drill

import (
	"net"
	"os/exec"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/vigil-kv/vigil/integration"
)

func TestDrill(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "vigil drill Suite")
}

// vigilBin is cmd/vigil built once for the suite.
var vigilBin string

var _ = BeforeSuite(func() {
	var err error
	vigilBin, err = integration.Binary(integration.CLIBinEnv, integration.CLIPkg)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(gexec.CleanupBuildArtifacts)
})

// needRedis skips unless Debian's redis-server and redis-sentinel are
// installed: --server redis runs both.
func needRedis() {
	needRedisSentinel()
}

// needRedisSentinel skips unless Debian's redis-server and redis-sentinel
// are both installed (vigil drill --against redis).
func needRedisSentinel() {
	for _, bin := range []string{"redis-server", "redis-sentinel"} {
		if _, err := exec.LookPath(bin); err != nil {
			Skip(bin + " not installed: apt-get install -y redis-server redis-sentinel redis-tools")
		}
	}
}

// freeRange returns the first of n consecutive free loopback ports.
func freeRange(n int) int {
	for try := 0; try < 50; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		base := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if base+n > 65535 {
			continue
		}
		ok := true
		for p := base; p < base+n && ok; p++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", itoa(p)))
			if err != nil {
				ok = false
				continue
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	Fail("no range of free ports")
	return 0
}
