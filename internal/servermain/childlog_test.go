package servermain

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// childLogLine is a log line of another process than the server: a fork
// child's (serverLogRaw writes the child's pid and role C).
var childLogLine = regexp.MustCompile(`^(\d+):C \d\d [A-Z][a-z]{2} \d{4} [\d:.]+ ([.*#-]) (.*)$`)

var startedByPid = regexp.MustCompile(` started by pid (\d+)$`)

// TestSaveChildLogLines: what a BGSAVE's child, an AOF rewrite's child and
// a diskless sync's redis-rdb-to-slaves child log, each with its own pid
// (the one the server logged it started) and role C, on vigil-server and,
// when installed, redis-server 7.0.15: "DB saved on disk", "Successfully
// created the temporary AOF base file temp-rewriteaof-bg-<pid>.aof" and
// each one's "Fork CoW for ..." line.
func TestSaveChildLogLines(t *testing.T) {
	conf := "save \"\"\nrepl-diskless-sync yes\nrepl-diskless-sync-delay 0\n"
	want := []string{
		"* DB saved on disk",
		"* Fork CoW for RDB: current N MB, peak N MB, average N MB",
		"* Successfully created the temporary AOF base file temp-rewriteaof-bg-<pid>.aof",
		"* Fork CoW for AOF rewrite: current N MB, peak N MB, average N MB",
		"* Fork CoW for RDB: current N MB, peak N MB, average N MB",
	}
	mb := regexp.MustCompile(`\d+ MB`)
	for name, m := range saveServers(t, conf) {
		t.Run(name, func(t *testing.T) {
			m.mustDo(t, "+OK\r\n", "SET", "a", "b")
			m.mustDo(t, "+Background saving started\r\n", "BGSAVE")
			waitLog(t, m, "Background saving terminated with success")
			m.mustDo(t, "+Background append only file rewriting started\r\n", "BGREWRITEAOF")
			waitLog(t, m, "Background AOF rewrite finished successfully")
			replicaOf(t, m)
			waitLog(t, m, "Background RDB transfer terminated with success")
			server := strconv.Itoa(m.cmd.Process.Pid)
			var got []string
			child := ""
			for _, line := range strings.Split(m.log(), "\n") {
				if s := startedByPid.FindStringSubmatch(line); s != nil {
					child = s[1]
				}
				c := childLogLine.FindStringSubmatch(line)
				if c == nil || c[1] == server {
					continue // the server's own (its first lines are C too)
				}
				if c[1] != child {
					t.Errorf("line %q: pid %s, but the child started last is %q", line, c[1], child)
				}
				msg := strings.ReplaceAll(c[3], c[1], "<pid>")
				got = append(got, c[2]+" "+mb.ReplaceAllString(msg, "N MB"))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("children's lines:\n got %q\nwant %q\nlog:\n%s", got, want, m.log())
			}
		})
	}
}
