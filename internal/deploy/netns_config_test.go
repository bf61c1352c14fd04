package deploy

import (
	"strings"
	"testing"
)

// TestNetnsNodeConfigs: a node in a namespace binds its own IP, accepts
// clients from other addresses (protected-mode no), and the replica and
// sentinel point at the master's IP; without namespaces none of that.
func TestNetnsNodeConfigs(t *testing.T) {
	s := Spec{Dir: t.TempDir(), BasePort: 7000, SentinelBasePort: 27000, Netns: true}.withDefaults()
	m := s.newNode(RoleMaster, 7000, nil)
	r := s.newNode(RoleReplica, 7001, nil)
	sen := s.newNode(RoleSentinel, 27000, nil)
	for i, n := range []*Node{m, r, sen} {
		n.Host = "10.200.1." + itoa(2+i)
		n.netns = "vigil-1-1-" + n.Name
	}
	conf := func(n *Node) string {
		t.Helper()
		text, err := s.nodeConfig(n, m, nil)
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	lines := func(text string) map[string]bool {
		out := map[string]bool{}
		for _, l := range strings.Split(text, "\n") {
			out[strings.TrimSpace(l)] = true
		}
		return out
	}
	for _, c := range []struct {
		n    *Node
		want []string
		not  []string
	}{
		{m, []string{"bind 10.200.1.2", "protected-mode no", "port 7000"}, []string{"bind 127.0.0.1 -::1", "protected-mode yes"}},
		{r, []string{"bind 10.200.1.3", "protected-mode no", "replicaof 10.200.1.2 7000"}, []string{"protected-mode yes"}},
		{sen, []string{"bind 10.200.1.4", "sentinel monitor mymaster 10.200.1.2 7000 2"}, []string{"protected-mode no"}},
	} {
		got := lines(conf(c.n))
		for _, w := range c.want {
			if !got[w] {
				t.Errorf("%s: config lacks %q:\n%s", c.n.Name, w, conf(c.n))
			}
		}
		for _, w := range c.not {
			if got[w] {
				t.Errorf("%s: config has %q", c.n.Name, w)
			}
		}
	}
	// Without a namespace the template's protected mode stays.
	m.netns, m.Host = "", "127.0.0.1"
	if got := lines(conf(m)); got["protected-mode no"] || !got["bind 127.0.0.1"] {
		t.Errorf("loopback master config:\n%s", conf(m))
	}
	if err := (Spec{Netns: true, Proxy: true}).withDefaults().validate(); err == nil || !strings.Contains(err.Error(), "exclusive") {
		t.Errorf("Netns with Proxy: %v", err)
	}
}
