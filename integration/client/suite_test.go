package client

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/vigil-kv/vigil/integration"
)

func TestClient(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Client Suite")
}

// SentinelBinEnv selects the sentinel binary instead of building
// ./cmd/vigil-sentinel; DataServerBinEnv the data servers' binary instead of
// Debian's redis-server (e.g. a built vigil-server).
const (
	SentinelBinEnv   = "VIGIL_SENTINEL_BIN"
	DataServerBinEnv = "VIGIL_DATA_SERVER_BIN"
)

var (
	sentinelBin  string
	sentinelSkip string // non-empty: specs needing sentinels skip with it
	dataSkip     string // non-empty: every spec skips with it
)

type binaries struct{ Data, DataSkip, Sentinel, SentinelSkip string }

var _ = SynchronizedBeforeSuite(func() []byte {
	var b binaries
	if bin := os.Getenv(DataServerBinEnv); bin != "" {
		b.Data = bin
	} else if p, err := exec.LookPath("redis-server"); err == nil {
		b.Data = p
	} else {
		b.DataSkip = "redis-server not installed: apt-get install -y redis-server redis-sentinel redis-tools"
	}
	if bin := os.Getenv(SentinelBinEnv); bin != "" {
		b.Sentinel = bin
	} else if bin, err := gexec.Build("github.com/vigil-kv/vigil/cmd/vigil-sentinel"); err == nil {
		b.Sentinel = bin
	} else {
		b.SentinelSkip = fmt.Sprintf("./cmd/vigil-sentinel does not build: %v", err)
	}
	out, err := json.Marshal(b)
	Expect(err).NotTo(HaveOccurred())
	return out
}, func(data []byte) {
	var b binaries
	Expect(json.Unmarshal(data, &b)).To(Succeed())
	integration.ServerBin, dataSkip = b.Data, b.DataSkip
	sentinelBin, sentinelSkip = b.Sentinel, b.SentinelSkip
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})
