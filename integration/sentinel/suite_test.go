package sentinel

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

// TestSentinel runs the sentinel suites under plain `go test ./...`. Narrow
// them with labels, for example
//
//	go test ./integration/sentinel/ -ginkgo.label-filter='!slow'
//	VIGIL_SENTINEL_BIN=/usr/bin/redis-sentinel go test ./integration/sentinel/
func TestSentinel(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Sentinel Suite")
}

// binaries is what the first parallel process resolves for all of them.
type binaries struct {
	Sentinel      string // the sentinel under test
	SentinelSkip  string // why specs needing Sentinel skip ("" = they run)
	RedisSentinel string // the reference redis-sentinel, "" when absent
	Data          string // the data server
	DataSkip      string // why every spec skips ("" = they run)
}

var _ = SynchronizedBeforeSuite(func() []byte {
	var b binaries

	b.Data = os.Getenv(DataServerBinEnv)
	if b.Data == "" {
		b.Data = "/usr/bin/redis-server"
		if _, err := os.Stat(b.Data); err != nil {
			if p, err := exec.LookPath("redis-server"); err == nil {
				b.Data = p
			} else {
				b.DataSkip = "redis-server not installed (apt-get install redis-server)"
			}
		}
	} else if _, err := os.Stat(b.Data); err != nil {
		b.DataSkip = fmt.Sprintf("%s=%s: %v", DataServerBinEnv, b.Data, err)
	}

	b.RedisSentinel = os.Getenv(RedisSentinelBinEnv)
	if b.RedisSentinel == "" {
		b.RedisSentinel, _ = exec.LookPath("redis-sentinel")
	}

	if bin := os.Getenv(SentinelBinEnv); bin != "" {
		b.Sentinel = bin
		if _, err := os.Stat(bin); err != nil {
			b.SentinelSkip = fmt.Sprintf("%s=%s: %v", SentinelBinEnv, bin, err)
		}
	} else {
		bin, err := gexec.Build("github.com/vigil-kv/vigil/cmd/vigil-sentinel")
		if err != nil {
			b.SentinelSkip = fmt.Sprintf("./cmd/vigil-sentinel does not build (yet); "+
				"set %s=/usr/bin/redis-sentinel to run the specs against Redis: %v", SentinelBinEnv, err)
		}
		b.Sentinel = bin
	}
	out, err := json.Marshal(b)
	Expect(err).NotTo(HaveOccurred())
	return out
}, func(data []byte) {
	var b binaries
	Expect(json.Unmarshal(data, &b)).To(Succeed())
	SentinelBin, SentinelSkip = b.Sentinel, b.SentinelSkip
	RedisSentinelBin = b.RedisSentinel
	DataBin, DataSkip = b.Data, b.DataSkip
	integration.ServerBin = DataBin
	// go-redis logs every failed dial of the FailoverClient; keep that in
	// the spec output (shown on failure or with -ginkgo.v), not on stderr.
	redis.SetLogger(ginkgoLogger{})
	switch {
	case DataSkip != "":
		AddReportEntry("every spec skips", DataSkip, ReportEntryVisibilityAlways)
	case SentinelSkip != "":
		AddReportEntry("specs needing the sentinel under test skip", SentinelSkip, ReportEntryVisibilityAlways)
	default:
		AddReportEntry("sentinel under test", fmt.Sprintf("%s (%s)", SentinelBin, KindOf(SentinelBin)))
	}
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})

// ginkgoLogger sends go-redis's log lines to the GinkgoWriter.
type ginkgoLogger struct{}

func (ginkgoLogger) Printf(_ context.Context, format string, v ...any) {
	fmt.Fprintf(GinkgoWriter, "go-redis: "+format+"\n", v...)
}
