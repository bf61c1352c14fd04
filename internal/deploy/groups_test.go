package deploy

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestGroupNamesAndPorts(t *testing.T) {
	s := Spec{BasePort: 7000, Groups: 3}.withDefaults()
	if got, want := s.GroupNames(), []string{"mymaster", "mymaster-2", "mymaster-3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("GroupNames = %q, want %q", got, want)
	}
	for g, want := range map[int]int{1: 7000, 2: 7003, 3: 7006} {
		if got := s.GroupBasePort(g); got != want {
			t.Errorf("GroupBasePort(%d) = %d, want %d", g, got, want)
		}
	}
	if got := s.lastServerPort(); got != 7008 {
		t.Errorf("lastServerPort = %d, want 7008", got)
	}
	one := Spec{}.withDefaults()
	if one.Groups != 1 || !reflect.DeepEqual(one.GroupNames(), []string{"mymaster"}) {
		t.Errorf("default groups %d %q", one.Groups, one.GroupNames())
	}
}

func TestGroupsValidation(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Groups: -1}, "groups -1"},
		{Spec{Groups: 3, BasePort: 65530}, "the servers need ports 65530-65538"},
		{Spec{Groups: 2, BasePort: 7000, SentinelBasePort: 7004}, "overlap sentinel ports"},
	} {
		err := tc.spec.withDefaults().validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestRenameMasterCopiesLinesPerGroup(t *testing.T) {
	in := "port 26379\nsentinel monitor mymaster 127.0.0.1 6379 2\nsentinel down-after-milliseconds mymaster 5000\n"
	got := renameMaster(in, "a", "b")
	want := "port 26379\nsentinel monitor a 127.0.0.1 6379 2\nsentinel monitor b 127.0.0.1 6379 2\n" +
		"sentinel down-after-milliseconds a 5000\nsentinel down-after-milliseconds b 5000\n"
	if got != want {
		t.Errorf("renameMaster:\n%s\nwant:\n%s", got, want)
	}
	if renameMaster(in, "mymaster") != in {
		t.Error("the template's own name changed the text")
	}
}

func TestSortNames(t *testing.T) {
	names := []string{"mymaster-10", "mymaster-2", "cache", "mymaster", "mymaster-3"}
	SortNames(names)
	if want := []string{"cache", "mymaster", "mymaster-2", "mymaster-3", "mymaster-10"}; !reflect.DeepEqual(names, want) {
		t.Errorf("SortNames = %q, want %q", names, want)
	}
}

// TestGroupsDeployment: two groups get their own servers and replicaof
// lines, the sentinels monitor both, and each group's view holds its
// servers, the shared sentinels and its master name.
func TestGroupsDeployment(t *testing.T) {
	d, err := newFree(t, Spec{Dir: t.TempDir(), VigilExe: "/bin/true", Groups: 2, DownAfter: 1500e6})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Servers) != 6 || len(d.Sentinels) != 3 {
		t.Fatalf("%d servers, %d sentinels; want 6 and 3", len(d.Servers), len(d.Sentinels))
	}
	gs := d.Groups()
	if len(gs) != 2 || gs[0].Spec.MasterName != "mymaster" || gs[1].Spec.MasterName != "mymaster-2" {
		t.Fatalf("groups %v", gs)
	}
	for i, g := range gs {
		if !reflect.DeepEqual(g.Servers, d.Servers[3*i:3*i+3]) || !reflect.DeepEqual(g.Sentinels, d.Sentinels) {
			t.Errorf("group %d: servers %v sentinels %v", i+1, g.Servers, g.Sentinels)
		}
		if g.Spec.BasePort != g.Servers[0].Port || g.Servers[0].Role != RoleMaster || g.Servers[1].Role != RoleReplica {
			t.Errorf("group %d: base port %d, servers %v", i+1, g.Spec.BasePort, g.Servers)
		}
		if d.Group(g.Spec.MasterName) != g {
			t.Errorf("Group(%q) is not the view", g.Spec.MasterName)
		}
		b, _ := os.ReadFile(g.Servers[2].ConfPath)
		if c := lines(string(b)); c["replicaof"] != "replicaof 127.0.0.1 "+itoa(g.Servers[0].Port) {
			t.Errorf("group %d replica: %q", i+1, c["replicaof"])
		}
	}
	b, _ := os.ReadFile(d.Sentinels[0].ConfPath)
	c := lines(string(b))
	for i, g := range gs {
		name := g.Spec.MasterName
		for k, want := range map[string]string{
			"sentinel monitor " + name:                 "sentinel monitor " + name + " 127.0.0.1 " + itoa(gs[i].Servers[0].Port) + " 2",
			"sentinel down-after-milliseconds " + name: "sentinel down-after-milliseconds " + name + " 1500",
			"sentinel parallel-syncs " + name:          "sentinel parallel-syncs " + name + " 1",
		} {
			if c[k] != want {
				t.Errorf("sentinel: %q, want %q\n%s", c[k], want, b)
			}
		}
	}
	if d.Group("nope") != nil {
		t.Error("Group of an unknown name")
	}
	// One group: the deployment is its own only group.
	one, err := newFree(t, Spec{Dir: t.TempDir(), VigilExe: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	if gs := one.Groups(); len(gs) != 1 || gs[0] != one {
		t.Errorf("one group: %v", gs)
	}
}
