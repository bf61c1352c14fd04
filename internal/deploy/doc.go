// Package deploy starts, stops, kills, pauses and partitions local deployments
// (processes, network namespaces, containers) for `vigil up`, `vigil drill` and
// the integration suites. It may import configs and internal/clock.
package deploy
