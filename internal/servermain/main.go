package servermain

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/server"
)

// Run is vigil-server's main: it runs the server as redis-server would with
// these arguments (os.Args[1:]) until SIGTERM/SIGINT or SHUTDOWN, and returns
// the exit code. `vigil server` calls it too.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	return runWithSignals(args, stdin, stdout, stderr, sigs)
}

// runWithSignals is Run with the signal source injected (tests send on it).
func runWithSignals(args []string, stdin io.Reader, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	code := 0
	app := &cli.App{
		Name:      "vigil-server",
		Usage:     "a Redis 7.0 compatible server",
		UsageText: "vigil-server [/path/to/redis.conf] [--directive value ...] [-]",
		Version:   version(),
		// redis-server's `--port 7000` style is not a flag set: every
		// argument goes to the Action untouched, and -h/-v are handled there
		// as redis-server does (first argument only).
		SkipFlagParsing: true,
		HideHelp:        true,
		HideHelpCommand: true,
		HideVersion:     true,
		Writer:          stdout,
		ErrWriter:       stderr,
		ExitErrHandler:  func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			code = dispatch(c.Args().Slice(), stdin, stdout, stderr, sigs)
			return nil
		},
	}
	if err := app.Run(append([]string{"vigil-server"}, args...)); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return code
}

// dispatch handles the informational first arguments, then serves.
func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	if len(args) > 0 {
		switch args[0] {
		case "-v", "--version":
			fmt.Fprintf(stdout, "Redis server v=%s sha=00000000:0 malloc=go bits=64 build=%s\n", redisVersion(), buildID())
			fmt.Fprintf(stdout, "vigil-server %s\n", version())
			return 0
		case "-h", "--help":
			usage(stderr)
			return 1
		case "--test-memory", "--check-system":
			fmt.Fprintf(stderr, "vigil-server does not implement %s\n", args[0])
			return 1
		}
	}
	for _, a := range args {
		if a == "--sentinel" {
			fmt.Fprintln(stderr, "vigil-server has no sentinel mode: run vigil-sentinel /path/to/sentinel.conf")
			return 1
		}
	}
	return serve(splitArgs(args), stdin, stdout, stderr, sigs)
}

// usage prints redis-server's usage text, with Vigil's name. Like
// redis-server it goes to stderr and the exit code is 1.
func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: vigil-server [/path/to/redis.conf] [options] [-]
       vigil-server - (read config from stdin)
       vigil-server -v or --version
       vigil-server -h or --help

Examples:
       vigil-server (run the server with default conf)
       echo 'maxmemory 128mb' | vigil-server -
       vigil-server /etc/redis/6379.conf
       vigil-server --port 7777
       vigil-server --port 7777 --replicaof 127.0.0.1 8888
       vigil-server /etc/myredis.conf --loglevel verbose -
       vigil-server /etc/myredis.conf --loglevel verbose

Options are config directives (see redis.conf) with two dashes; they are
applied after the config file, so they override it.

Sentinel mode: run vigil-sentinel /etc/sentinel.conf
`)
}

func version() string      { return server.Version }
func redisVersion() string { return server.RedisVersion }

// buildID stands in for redis's build id: the VCS revision when the binary
// was built from a checkout.
func buildID() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 16 {
				return s.Value[:16]
			}
		}
	}
	return "0"
}

// invocation is the command line split as redis-server's main does.
type invocation struct {
	configFile string // "" when none
	stdin      bool   // "-" first or last: read config from stdin too
	// overrides are the --directive value arguments as given, without the
	// config file and the "-"; configs.Load turns them into directive lines
	// (configs.ArgsToConfig, as redis-server's main).
	overrides []string
	// noArgs is true when the command line was empty (Redis's "no config
	// file specified" warning).
	noArgs bool
}

// splitArgs follows redis-server's main (server.c, Redis 7.0): a first
// argument not starting with "-" is the config file; "-" as the first or
// last argument reads the config from stdin (after the file); everything
// else is directive overrides.
func splitArgs(args []string) invocation {
	inv := invocation{noArgs: len(args) == 0}
	j := 0
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		inv.configFile = args[0]
		j = 1
	}
	for ; j < len(args); j++ {
		if args[j] == "-" && (j == 0 || j == len(args)-1) {
			inv.stdin = true
			continue
		}
		inv.overrides = append(inv.overrides, args[j])
	}
	return inv
}
