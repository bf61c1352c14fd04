package up

import (
	"os/exec"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/vigil-kv/vigil/integration"
)

func TestUp(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "vigil up Suite")
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
// installed.
func needRedis() {
	for _, b := range []string{"redis-server", "redis-sentinel"} {
		if _, err := exec.LookPath(b); err != nil {
			Skip(b + " not installed: apt-get install -y redis-server redis-sentinel redis-tools")
		}
	}
}
