// Package docker holds the Ginkgo suite that runs the example deployment of
// configs/examples/compose.yaml (1 master, 2 replicas, 3 sentinels) in
// containers of the FROM-scratch image of deploy/docker, and injects the
// faults that only containers give: the master's container is SIGKILLed
// (docker kill), frozen (docker pause) and cut off its network (docker
// network disconnect). After each fault it checks from the host, with
// go-redis and with a sentinel-following client (package client), that the
// sentinels fail over, that the client follows the new master, and that once
// the old master is back every sentinel lists exactly the live replicas and
// the two other sentinels, none of them down. A sentinel container SIGKILLed
// and restarted with docker start comes back with its saved state. Last, the
// master's container and a sentinel's are replaced by containers at new
// addresses (as pods are): the client follows the failover, and after the
// sentinels' forget-after-milliseconds (VIGIL_FORGET_AFTER, 20 s here) no
// sentinel lists an old address, in SENTINEL REPLICAS / SENTINELS or in its
// config file.
//
// The suite needs a Docker engine that answers (`docker version`) and
// docker-compose (v1); it skips with a message otherwise. It builds the image
// with scripts/docker-image.sh (tag vigil:itest), brings the deployment up
// under a project name and subnet of its own, and removes the containers,
// network and image in AfterAll whatever happened. The host reaches the
// containers at their addresses on the bridge network (Linux).
package docker
