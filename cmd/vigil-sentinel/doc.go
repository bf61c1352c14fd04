// Command vigil-sentinel is a Redis 7.0 compatible Sentinel, invoked like
// redis-sentinel:
//
//	vigil-sentinel /path/to/sentinel.conf [--directive value ...]
//
// The configuration file is required and must be writable: the sentinel
// saves its state there. --directive flags apply on top of it.
//
// It owns the process shell only: argument splitting, logging setup, the pid
// file and signals. It may import sentinel/daemon, configs and the chosen
// libraries (urfave/cli, zerolog); nothing imports it.
package main
