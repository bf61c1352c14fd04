package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

// pkg is the part of `go list -json` output the rules read.
type pkg struct {
	ImportPath   string
	Dir          string
	Standard     bool
	Module       *struct{ Path string }
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// graph is the module's packages and everything they depend on.
type graph struct {
	module string          // module path, e.g. github.com/vigil-kv/vigil
	pkgs   map[string]*pkg // by import path, ours and our dependencies
	ours   []string        // import paths of the module's own packages, sorted
}

// rel turns an import path of the module into its directory relative to the
// module root ("" for the root itself); other paths come back unchanged with
// ok false.
func (g *graph) rel(path string) (string, bool) {
	if path == g.module {
		return "", true
	}
	if r, found := strings.CutPrefix(path, g.module+"/"); found {
		return r, true
	}
	return path, false
}

// standard reports whether path belongs to the Go standard library.
func (g *graph) standard(path string) bool {
	if p, ok := g.pkgs[path]; ok {
		return p.Standard
	}
	if path == "C" {
		return true
	}
	// Not listed (a test-only import): the standard library has no dot in its
	// first path element, modules do.
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// chain is the shortest import path from one package to another through
// non-test imports, for messages: "a -> b -> c".
func (g *graph) chain(from, to string) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var hops []string
			for p := to; p != ""; p = prev[p] {
				hops = append(hops, g.short(p))
			}
			for i, j := 0, len(hops)-1; i < j; i, j = i+1, j-1 {
				hops[i], hops[j] = hops[j], hops[i]
			}
			return strings.Join(hops, " -> ")
		}
		p, ok := g.pkgs[cur]
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = cur
				queue = append(queue, imp)
			}
		}
	}
	return g.short(from) + " -> ... -> " + g.short(to)
}

// short names the module's packages by their directory.
func (g *graph) short(path string) string {
	if r, ok := g.rel(path); ok {
		if r == "" {
			return "(module root)"
		}
		return r
	}
	return path
}

// matcher selects packages by their directory relative to the module root;
// paths outside the module never match.
type matcher func(g *graph, path string) bool

// exact matches the named directories only.
func exact(dirs ...string) matcher {
	return func(g *graph, path string) bool {
		r, ok := g.rel(path)
		if !ok {
			return false
		}
		for _, d := range dirs {
			if r == d {
				return true
			}
		}
		return false
	}
}

// tree matches the named directories and everything below them.
func tree(dirs ...string) matcher {
	return func(g *graph, path string) bool {
		r, ok := g.rel(path)
		if !ok {
			return false
		}
		for _, d := range dirs {
			if r == d || strings.HasPrefix(r, d+"/") {
				return true
			}
		}
		return false
	}
}

// below matches what is under the named directories, not the directories.
func below(dirs ...string) matcher {
	return func(g *graph, path string) bool {
		r, ok := g.rel(path)
		if !ok {
			return false
		}
		for _, d := range dirs {
			if strings.HasPrefix(r, d+"/") {
				return true
			}
		}
		return false
	}
}

// external matches the packages of the module mod (outside ours), its
// subpackages included.
func external(mod string) matcher {
	return func(g *graph, path string) bool {
		if _, ok := g.rel(path); ok {
			return false
		}
		return path == mod || strings.HasPrefix(path, mod+"/")
	}
}

// anyOurs matches every package of the module.
func anyOurs(g *graph, path string) bool { _, ok := g.rel(path); return ok }

// nonStandard matches everything outside the standard library.
func nonStandard(g *graph, path string) bool { return !g.standard(path) }

// either matches what any of ms matches.
func either(ms ...matcher) matcher {
	return func(g *graph, path string) bool {
		for _, m := range ms {
			if m(g, path) {
				return true
			}
		}
		return false
	}
}

// but matches what m matches and not does not.
func but(m, not matcher) matcher {
	return func(g *graph, path string) bool { return m(g, path) && !not(g, path) }
}

// rule forbids packages matched by from to depend on packages matched by
// forbid.
type rule struct {
	name   string
	from   matcher
	forbid matcher
	// direct checks the direct imports, test imports included, instead of the
	// transitive non-test dependencies.
	direct bool
	// allow exempts a pair (for example a binary's own subpackages).
	allow func(g *graph, from, to string) bool
}

// rules is the dependency rule of docs/architecture.md, one row per rule;
// that page lists them and must change with this table.
var rules = []rule{
	{
		name:   "the sentinel core imports internal/redisutil and the standard library only",
		from:   exact("sentinel"),
		forbid: but(nonStandard, exact("internal/redisutil")),
	},
	{
		name:   "the Redis string routines import the standard library only",
		from:   exact("internal/redisutil"),
		forbid: nonStandard,
	},
	{
		name:   "leaf packages import internal/redisutil and the standard library only",
		from:   exact("internal/resp", "internal/clock", "configs", "server/keyspace", "server/geo"),
		forbid: but(nonStandard, exact("internal/redisutil")),
	},
	{
		name:   "the shared reply texts import internal/resp, internal/redisutil and the standard library only",
		from:   exact("internal/redistext"),
		forbid: but(nonStandard, tree("internal/resp", "internal/redisutil")),
	},
	{
		name:   "the Lua engine imports gopher-lua, internal/resp (with its internal/redisutil) and the standard library only",
		from:   exact("server/lua"),
		forbid: but(nonStandard, either(external("github.com/yuin/gopher-lua"), exact("internal/resp", "internal/redisutil"))),
	},
	{
		name:   "the ACL imports internal/resp and the standard library only",
		from:   exact("internal/acl"),
		forbid: but(nonStandard, tree("internal/resp", "internal/redisutil")),
	},
	{
		name:   "the network shell never imports the binaries it serves",
		from:   tree("internal/netshell"),
		forbid: either(exact("server"), tree("sentinel", "replication", "client", "cmd")),
	},
	{
		name:   "client imports no server-side package",
		from:   tree("client"),
		forbid: tree("server", "sentinel", "replication", "configs", "internal"),
	},
	{
		name:   "nothing imports cmd or integration",
		from:   anyOurs,
		forbid: tree("cmd", "integration"),
		direct: true,
		allow:  sameArea,
	},
	{
		name:   "replication never imports server",
		from:   tree("replication"),
		forbid: exact("server"),
	},
	{
		name:   "server subpackages never import server or sentinel",
		from:   below("server"),
		forbid: either(exact("server"), tree("sentinel")),
	},
	{
		name:   "sentinel/daemon never imports server",
		from:   tree("sentinel/daemon"),
		forbid: exact("server"),
	},
	{
		name:   "the bottom layer never imports the layer above it",
		from:   either(tree("replication", "configs", "internal/resp", "internal/clock"), below("server")),
		forbid: either(exact("server"), tree("sentinel/daemon", "client", "internal/deploy", "internal/drill", "cmd")),
	},
}

// sameArea allows a binary's or a suite's own subpackages to import each
// other: cmd/vigil -> cmd/vigil/internal, integration/x -> integration.
func sameArea(g *graph, from, to string) bool {
	area := func(path string) string {
		r, _ := g.rel(path)
		parts := strings.Split(r, "/")
		if parts[0] == "cmd" && len(parts) > 1 {
			return "cmd/" + parts[1]
		}
		return parts[0]
	}
	return area(from) == area(to)
}

// violations lists, one message each, the imports that break r.
func (g *graph) violations(r rule) []string {
	var out []string
	for _, from := range g.ours {
		if !r.from(g, from) {
			continue
		}
		p := g.pkgs[from]
		var deps []string
		if r.direct {
			deps = append(deps, p.Imports...)
			deps = append(deps, p.TestImports...)
			deps = append(deps, p.XTestImports...)
		} else {
			deps = p.Deps
		}
		seen := map[string]bool{}
		for _, d := range deps {
			if seen[d] || d == from || !r.forbid(g, d) {
				continue
			}
			seen[d] = true
			if r.allow != nil && r.allow(g, from, d) {
				continue
			}
			how := g.chain(from, d)
			if r.direct {
				how = g.short(from) + " -> " + g.short(d)
			}
			out = append(out, fmt.Sprintf("%s imports %s (%s)", g.short(from), g.short(d), how))
		}
	}
	sort.Strings(out)
	return out
}

func TestDependencyRule(t *testing.T) {
	g := load(t)
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			for _, v := range g.violations(r) {
				t.Errorf("%s breaks the rule %q (shared/design.md)", v, r.name)
			}
		})
	}
}

// TestOneACL: both binaries check permissions with the one ACL of
// internal/acl (docs/architecture.md), not an ACL of their own.
func TestOneACL(t *testing.T) {
	g := load(t)
	for _, from := range []string{"server", "sentinel/daemon"} {
		p := g.pkgs[g.module+"/"+from]
		if p == nil {
			t.Fatalf("package %s not found", from)
		}
		if !slices.Contains(p.Imports, g.module+"/internal/acl") {
			t.Errorf("%s does not import internal/acl: both binaries share one ACL", from)
		}
	}
}

func TestEveryPackageHasDocGo(t *testing.T) {
	g := load(t)
	for _, path := range g.ours {
		p := g.pkgs[path]
		if _, err := os.Stat(filepath.Join(p.Dir, "doc.go")); err != nil {
			t.Errorf("package %s has no doc.go: add one saying what the package owns and what it may import", g.short(path))
		}
	}
}

// TestRulesCatchViolations runs the table over a made-up module that breaks
// every rule, so a rule that silently matches nothing is noticed.
func TestRulesCatchViolations(t *testing.T) {
	const m = "example.com/m"
	g := &graph{module: m, pkgs: map[string]*pkg{}}
	add := func(path string, std bool, imports ...string) {
		g.pkgs[path] = &pkg{ImportPath: path, Standard: std, Imports: imports}
		if strings.HasPrefix(path, m+"/") {
			g.ours = append(g.ours, path)
		}
	}
	add("fmt", true)
	add("github.com/other/lib", false, "fmt")
	add(m+"/internal/resp", false, "fmt", "github.com/other/lib")
	add(m+"/sentinel", false, m+"/internal/resp")
	add(m+"/configs", false, "fmt")
	add(m+"/server", false, m+"/configs")
	add(m+"/server/keyspace", false, "fmt", m+"/internal/redisutil")
	add(m+"/internal/redisutil", false, "fmt", "github.com/other/lib")
	add(m+"/internal/redistext", false, m+"/internal/resp", m+"/configs")
	add(m+"/internal/acl", false, m+"/internal/resp", m+"/configs")
	add("github.com/yuin/gopher-lua", false, "fmt", "github.com/yuin/gopher-lua/parse")
	add("github.com/yuin/gopher-lua/parse", false, "fmt")
	add(m+"/server/lua", false, "github.com/yuin/gopher-lua", m+"/internal/resp", m+"/server")
	add(m+"/server/rdb", false, m+"/server", m+"/sentinel")
	add(m+"/replication", false, m+"/server")
	add(m+"/sentinel/daemon", false, m+"/server")
	add(m+"/client", false, m+"/configs")
	add(m+"/cmd/vigil", false, m+"/cmd/vigil/ui", m+"/cmd/vigil-server")
	add(m+"/cmd/vigil/ui", false, "fmt")
	add(m+"/cmd/vigil-server", false, m+"/server")
	add(m+"/integration", false, "fmt")
	add(m+"/integration/failover", false, m+"/integration")
	add(m+"/internal/drill", false, m+"/integration")
	add(m+"/internal/netshell", false, m+"/configs", m+"/sentinel/daemon")
	sort.Strings(g.ours)
	// Deps is the transitive closure of Imports, as go list reports it.
	for _, p := range g.pkgs {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(path string) {
			for _, d := range g.pkgs[path].Imports {
				if !seen[d] {
					seen[d] = true
					walk(d)
				}
			}
		}
		walk(p.ImportPath)
		for d := range seen {
			p.Deps = append(p.Deps, d)
		}
		sort.Strings(p.Deps)
	}
	want := map[string][]string{
		"the sentinel core imports internal/redisutil and the standard library only": {
			"sentinel imports github.com/other/lib (sentinel -> internal/resp -> github.com/other/lib)",
			"sentinel imports internal/resp (sentinel -> internal/resp)",
		},
		"the Redis string routines import the standard library only": {
			"internal/redisutil imports github.com/other/lib (internal/redisutil -> github.com/other/lib)",
		},
		"leaf packages import internal/redisutil and the standard library only": {
			"internal/resp imports github.com/other/lib (internal/resp -> github.com/other/lib)",
			"server/keyspace imports github.com/other/lib (server/keyspace -> internal/redisutil -> github.com/other/lib)",
		},
		"the shared reply texts import internal/resp, internal/redisutil and the standard library only": {
			"internal/redistext imports configs (internal/redistext -> configs)",
			"internal/redistext imports github.com/other/lib (internal/redistext -> internal/resp -> github.com/other/lib)",
		},
		"the Lua engine imports gopher-lua, internal/resp (with its internal/redisutil) and the standard library only": {
			"server/lua imports configs (server/lua -> server -> configs)",
			"server/lua imports github.com/other/lib (server/lua -> internal/resp -> github.com/other/lib)",
			"server/lua imports server (server/lua -> server)",
		},
		"the ACL imports internal/resp and the standard library only": {
			"internal/acl imports configs (internal/acl -> configs)",
			"internal/acl imports github.com/other/lib (internal/acl -> internal/resp -> github.com/other/lib)",
		},
		"the network shell never imports the binaries it serves": {
			"internal/netshell imports sentinel/daemon (internal/netshell -> sentinel/daemon)",
			"internal/netshell imports server (internal/netshell -> sentinel/daemon -> server)",
		},
		"client imports no server-side package": {
			"client imports configs (client -> configs)",
		},
		"nothing imports cmd or integration": {
			"cmd/vigil imports cmd/vigil-server (cmd/vigil -> cmd/vigil-server)",
			"internal/drill imports integration (internal/drill -> integration)",
		},
		"replication never imports server": {
			"replication imports server (replication -> server)",
		},
		"server subpackages never import server or sentinel": {
			"server/lua imports server (server/lua -> server)",
			"server/rdb imports sentinel (server/rdb -> sentinel)",
			"server/rdb imports server (server/rdb -> server)",
		},
		"sentinel/daemon never imports server": {
			"sentinel/daemon imports server (sentinel/daemon -> server)",
		},
		"the bottom layer never imports the layer above it": {
			"replication imports server (replication -> server)",
			"server/lua imports server (server/lua -> server)",
			"server/rdb imports server (server/rdb -> server)",
		},
	}
	for _, r := range rules {
		got := g.violations(r)
		if w, ok := want[r.name]; !ok {
			t.Errorf("rule %q has no case in this test", r.name)
		} else if strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("rule %q:\n got: %q\nwant: %q", r.name, got, w)
		}
	}
}

// load runs `go list -deps -json ./...` from the module root once per test.
func load(t *testing.T) *graph {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	gomod, err := exec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if root == "." || root == "" {
		t.Fatalf("not inside a module (go env GOMOD printed %q)", gomod)
	}
	// -e: report packages that do not build yet rather than stop; the import
	// graph is all the rules need.
	cmd := exec.Command(goBin, "list", "-e", "-deps", "-json=ImportPath,Dir,Standard,Module,Imports,Deps,TestImports,XTestImports", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	g := &graph{pkgs: map[string]*pkg{}}
	mcmd := exec.Command(goBin, "list", "-m")
	mcmd.Dir = root
	modOut, err := mcmd.Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	g.module = strings.TrimSpace(string(modOut))
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(pkg)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		g.pkgs[p.ImportPath] = p
		if p.Module != nil && p.Module.Path == g.module {
			g.ours = append(g.ours, p.ImportPath)
		}
	}
	sort.Strings(g.ours)
	if len(g.ours) == 0 {
		t.Fatalf("go list found no package of module %s under %s", g.module, root)
	}
	return g
}
