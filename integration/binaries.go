package integration

import (
	"fmt"
	"os"

	"github.com/onsi/gomega/gexec"
)

// Environment variables that name prebuilt binaries of this module's
// commands, so that a run of every suite (.ci/run) builds each command once
// instead of once per suite. Unset, a suite builds the command itself
// (ServerBinEnv, VIGIL_SERVER_BIN, is the server's).
const (
	SentinelBinEnv = "VIGIL_SENTINEL_BIN" // ./cmd/vigil-sentinel
	CLIBinEnv      = "VIGIL_BIN"          // ./cmd/vigil
)

// Package paths of the commands.
const (
	ServerPkg   = "github.com/vigil-kv/vigil/cmd/vigil-server"
	SentinelPkg = "github.com/vigil-kv/vigil/cmd/vigil-sentinel"
	CLIPkg      = "github.com/vigil-kv/vigil/cmd/vigil"
)

// Binary returns the binary named by the environment variable env when it
// is set (it must exist), else a fresh gexec.Build of pkg (removed by
// gexec.CleanupBuildArtifacts).
func Binary(env, pkg string) (string, error) {
	if bin := os.Getenv(env); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s=%s: %w", env, bin, err)
		}
		return bin, nil
	}
	return gexec.Build(pkg)
}
