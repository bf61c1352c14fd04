package metrics

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/vigil-kv/vigil/integration"
)

// TestMetrics runs the suite under plain `go test ./integration/metrics/`.
func TestMetrics(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Metrics Suite")
}

// sentinelBin is the vigil-sentinel built for the suite.
var sentinelBin string

var _ = SynchronizedBeforeSuite(func() []byte {
	srv, err := integration.Binary(integration.ServerBinEnv, integration.ServerPkg)
	Expect(err).NotTo(HaveOccurred(), "building ./cmd/vigil-server")
	sen, err := integration.Binary(integration.SentinelBinEnv, integration.SentinelPkg)
	Expect(err).NotTo(HaveOccurred(), "building ./cmd/vigil-sentinel")
	return []byte(srv + "\n" + sen)
}, func(b []byte) {
	var srv, sen string
	for i, c := range b {
		if c == '\n' {
			srv, sen = string(b[:i]), string(b[i+1:])
		}
	}
	integration.ServerBin, sentinelBin = srv, sen
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})
