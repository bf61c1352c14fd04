// Command vigil is the operator tool (urfave/cli). Each subcommand lives
// in its own file; for now check-aof (redis-check-aof: validate and, with
// --fix, truncate an AOF manifest's files or a single AOF file).
//
// It may import server/aof (and later the other server, client and
// internal packages) and the chosen libraries; nothing imports it.
package main
