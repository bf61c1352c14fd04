package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// clockFree are the packages that must not read or wait on the wall clock
// (shared/design.md, "Time and randomness are inputs"): the pure cores
// take `now` as an argument and the shells own timers. Their tests may use
// the clock (a live test polls with a deadline); their code may not.
var clockFree = tree("replication", "server/keyspace")

// clockFreeExact are pure cores whose subpackages are shells: the sentinel
// core, not sentinel/daemon.
var clockFreeExact = exact("sentinel")

// clockFuncs are the package time functions that read or wait on the wall
// clock. Types, constants, Duration arithmetic, time.Unix and friends stay
// allowed: they compute with a time handed in.
var clockFuncs = map[string]bool{
	"Now": true, "Since": true, "Until": true,
	"Sleep": true, "After": true, "AfterFunc": true, "Tick": true, "NewTicker": true, "NewTimer": true,
}

// clockUses lists, "file:line: time.X" each, the uses of clockFuncs in
// one Go source file (a call or a reference such as `f := time.Now`,
// whatever name the file imports "time" as; a dot import is one too).
func clockUses(fset *token.FileSet, name string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != "time" {
			continue
		}
		local = "time"
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == "." {
			out = append(out, fmt.Sprintf("%s: dot import of time", fset.Position(imp.Pos())))
		}
	}
	if local == "" || local == "." || local == "_" {
		return out, nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && clockFuncs[sel.Sel.Name] {
			out = append(out, fmt.Sprintf("%s: time.%s", fset.Position(sel.Pos()), sel.Sel.Name))
		}
		return true
	})
	return out, nil
}

// TestPureCoresReadNoClock: replication, the sentinel core and
// server/keyspace call no time.Now, time.Sleep, time.After (nor the other
// clockFuncs) outside their tests; time comes in as an argument (or
// through internal/clock in the shells).
func TestPureCoresReadNoClock(t *testing.T) {
	g := load(t)
	fset := token.NewFileSet()
	checked := 0
	for _, path := range g.ours {
		if !clockFree(g, path) && !clockFreeExact(g, path) {
			continue
		}
		checked++
		files, err := filepath.Glob(filepath.Join(g.pkgs[path].Dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			uses, err := clockUses(fset, file, src)
			if err != nil {
				t.Fatalf("parsing %s: %v", file, err)
			}
			for _, u := range uses {
				t.Errorf("%s: %s reads the wall clock; take now as an argument (shared/design.md, \"Time and randomness are inputs\")", u, g.short(path))
			}
		}
	}
	if checked < 3 {
		t.Fatalf("only %d of the clock-free packages found: the matchers match nothing", checked)
	}
}

// TestClockUsesCatchViolations runs clockUses over made-up sources, so a
// check that silently matches nothing is noticed.
func TestClockUsesCatchViolations(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
	}{
		{`package p
import "time"
func f() time.Duration { time.Sleep(1); <-time.After(2); return time.Since(time.Now()) }`,
			[]string{"p.go:3:26: time.Sleep", "p.go:3:43: time.After", "p.go:3:65: time.Since", "p.go:3:76: time.Now"}},
		{`package p
import tm "time"
var now = tm.Now
func f(t tm.Time) tm.Time { return t.Add(tm.Second) }`,
			[]string{"p.go:3:11: time.Now"}},
		{`package p
import . "time"
var d = Second`,
			[]string{"p.go:2:8: dot import of time"}},
		{`package p
import "time"
func f(now time.Time) time.Time { return time.Unix(now.Unix(), 0) }`,
			nil},
		{`package p
func f(time interface{ Now() int }) int { return time.Now() }`,
			nil},
	} {
		got, err := clockUses(token.NewFileSet(), "p.go", c.src)
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		sort.Strings(c.want)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.src, got, c.want)
		}
	}
}
