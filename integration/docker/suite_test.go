package docker

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// TestDocker runs the container suite under plain `go test ./...`; it skips
// when no Docker engine answers or docker-compose is absent.
func TestDocker(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Docker Suite")
}
