// Package integration holds the Ginkgo suites that run the built binaries as
// processes and check them with go-redis as an independent client.
package integration
