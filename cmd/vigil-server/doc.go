// Command vigil-server is a Redis 7.0 compatible server, invoked like
// redis-server:
//
//	vigil-server [/path/to/redis.conf] [--directive value ...] [-]
//
// The configuration is the file (or standard input for "-"), then the
// --directive flags on top of it, exactly as redis-server reads them.
//
// It owns the process shell only: argument splitting, logging setup, the pid
// file and signals. It may import server, configs and the chosen libraries
// (urfave/cli, zerolog); nothing imports it.
package main
