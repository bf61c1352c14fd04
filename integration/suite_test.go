package integration

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

// TestIntegration runs the Ginkgo suites of this package under plain
// `go test ./...`. Narrow it with labels, for example
//
//	go test ./integration/ -ginkgo.label-filter='!slow'
//	go test ./integration/ -ginkgo.label-filter='interop'
//
// The server under test is built once from ./cmd/vigil-server; set
// VIGIL_SERVER_BIN to run the same specs against another build (or against
// Debian's /usr/bin/redis-server, which checks the specs themselves).
func TestIntegration(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Integration Suite")
}

var _ = SynchronizedBeforeSuite(func() []byte {
	// Runs once, on the first parallel process.
	bin, err := Binary(ServerBinEnv, ServerPkg)
	Expect(err).NotTo(HaveOccurred(), "building ./cmd/vigil-server")
	return []byte(bin)
}, func(bin []byte) {
	// Runs on every parallel process.
	ServerBin = string(bin)
	_, err := os.Stat(ServerBin)
	Expect(err).NotTo(HaveOccurred(), "server binary %q", ServerBin)
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})
