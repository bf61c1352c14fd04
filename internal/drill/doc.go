// Package drill holds the drill workload, fault schedule, history and checker
// (lost acknowledged writes). It may import client, internal/deploy.
package drill
