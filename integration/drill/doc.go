// Package drill is the integration suite of `vigil drill`: it builds
// cmd/vigil and runs a short drill (one round, two clients, down-after
// 1 s) of each fault against Debian's redis-server under vigil-sentinel on
// free ports, then checks report.json and timeline.svg. One spec runs
// partition-master, and one split, on a vigil-server fleet over Linux network
// namespaces (--net netns; skipped unless root with iproute2 and nftables). Specs carry the
// label "drill"; they skip when redis-server is not installed.
package drill
