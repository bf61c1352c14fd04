// Package client is the sentinel-aware Go client on go-redis: discovery through
// sentinels, ROLE checks, following +switch-master. It imports no server-side
// package (only go-redis and the standard library).
package client
