package drill

import (
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

// freeRange returns the first of n consecutive free loopback ports (from
// VIGIL_TEST_PORTS's range when it is set).
func freeRange(n int) int {
	GinkgoHelper()
	return integration.FreePorts(n)
}
