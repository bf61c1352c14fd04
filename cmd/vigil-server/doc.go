// Command vigil-server is a Redis 7.0 compatible server, invoked like
// redis-server:
//
//	vigil-server [/path/to/redis.conf] [--directive value ...] [-]
//
// The configuration is the file (or standard input for "-"), then the
// --directive flags on top of it, exactly as redis-server reads them.
//
// The program is internal/servermain, shared with the hidden `vigil server`
// subcommand; this main only calls servermain.Run. Nothing imports it.
package main
