package replication

import (
	"os/exec"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/vigil-kv/vigil/integration"
)

// TestReplication runs the replication specs (labels replication, interop).
//
//	go test ./integration/replication/ -ginkgo.label-filter='!interop'
func TestReplication(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Replication Suite")
}

// redisServerBin is Debian's redis-server, "" when absent (interop specs
// skip).
var redisServerBin string

// sentinelBin is the freshly built vigil-sentinel.
var sentinelBin string

var _ = SynchronizedBeforeSuite(func() []byte {
	bin, err := integration.Binary(integration.ServerBinEnv, integration.ServerPkg)
	Expect(err).NotTo(HaveOccurred(), "building ./cmd/vigil-server")
	sent, err := integration.Binary(integration.SentinelBinEnv, integration.SentinelPkg)
	Expect(err).NotTo(HaveOccurred(), "building ./cmd/vigil-sentinel")
	return []byte(bin + "\n" + sent)
}, func(bins []byte) {
	server, sent, _ := strings.Cut(string(bins), "\n")
	integration.ServerBin, sentinelBin = server, sent
	redisServerBin, _ = exec.LookPath("redis-server")
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})
