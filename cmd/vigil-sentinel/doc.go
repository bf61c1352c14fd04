// Command vigil-sentinel is a Redis 7.0 compatible Sentinel, invoked like
// redis-sentinel:
//
//	vigil-sentinel /path/to/sentinel.conf [--directive value ...]
//
// The configuration file is required and must be writable: the sentinel
// saves its state there. --directive flags apply on top of it.
//
// The program is internal/sentinelmain, shared with the hidden
// `vigil sentinel` subcommand; this main only calls sentinelmain.Run.
// Nothing imports it.
package main
