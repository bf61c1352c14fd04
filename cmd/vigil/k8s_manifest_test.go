package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/sentinel/daemon"
)

// The Kubernetes example (configs/examples/k8s) is checked here because its
// commands run this binary's subcommands and the server's and sentinel's
// config parsers.

const k8sDir = "../../configs/examples/k8s"

// k8sObject is the part of a manifest object the checks read.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		// Service
		ClusterIP                string           `yaml:"clusterIP"`
		PublishNotReadyAddresses bool             `yaml:"publishNotReadyAddresses"`
		Selector                 yaml.Node        `yaml:"selector"`
		Ports                    []k8sServicePort `yaml:"ports"`
		// StatefulSet
		ServiceName string `yaml:"serviceName"`
		Replicas    int    `yaml:"replicas"`
		Template    struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				InitContainers []k8sContainer `yaml:"initContainers"`
				Containers     []k8sContainer `yaml:"containers"`
				Volumes        []struct {
					Name      string `yaml:"name"`
					ConfigMap struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
		VolumeClaimTemplates []struct {
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		} `yaml:"volumeClaimTemplates"`
	} `yaml:"spec"`
}

type k8sServicePort struct {
	Name       string `yaml:"name"`
	Port       int    `yaml:"port"`
	TargetPort string `yaml:"targetPort"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Env     []struct {
		Name      string `yaml:"name"`
		ValueFrom struct {
			FieldRef struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	ReadinessProbe *struct {
		Exec struct {
			Command []string `yaml:"command"`
		} `yaml:"exec"`
	} `yaml:"readinessProbe"`
	Lifecycle struct {
		PreStop *struct {
			Exec struct {
				Command []string `yaml:"command"`
			} `yaml:"exec"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

func loadK8s(t *testing.T) map[string]*k8sObject {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(k8sDir, "*.yaml"))
	if len(files) == 0 {
		t.Fatalf("no manifests in %s", k8sDir)
	}
	objs := map[string]*k8sObject{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			o := &k8sObject{}
			if err := dec.Decode(o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			key := o.Kind + "/" + o.Metadata.Name
			if objs[key] != nil {
				t.Fatalf("%s: %s twice", f, key)
			}
			objs[key] = o
		}
	}
	return objs
}

func selectorLabels(t *testing.T, n yaml.Node, kind string) map[string]string {
	t.Helper()
	m := map[string]string{}
	if kind == "Service" {
		if err := n.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	var s struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	}
	if err := n.Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s.MatchLabels
}

func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// expand replaces $(POD_NAME) as the kubelet does in command arguments.
func expand(args []string, pod string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "$(POD_NAME)", pod)
	}
	return out
}

// checkVigilCommand checks that a /vigil command names one of our
// subcommands and only flags it has.
func checkVigilCommand(t *testing.T, where string, argv []string) {
	t.Helper()
	if len(argv) < 2 || argv[0] != "/vigil" {
		t.Errorf("%s: %q is not a /vigil command", where, argv)
		return
	}
	code := 0
	for _, c := range commands(&code) {
		if c.Name != argv[1] {
			continue
		}
		for _, a := range argv[2:] {
			if !strings.HasPrefix(a, "--") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			found := false
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					found = found || n == name
				}
			}
			if !found {
				t.Errorf("%s: vigil %s has no flag --%s", where, argv[1], name)
			}
		}
		return
	}
	t.Errorf("%s: vigil has no subcommand %q", where, argv[1])
}

func flagValues(argv []string, name string) []string {
	var v []string
	for i, a := range argv {
		if strings.HasPrefix(a, "--"+name+"=") {
			v = append(v, strings.TrimPrefix(a, "--"+name+"="))
		} else if a == "--"+name && i+1 < len(argv) {
			v = append(v, argv[i+1])
		}
	}
	return v
}

func TestK8sManifests(t *testing.T) {
	objs := loadK8s(t)
	for _, name := range []string{"vigil-server", "vigil-sentinel"} {
		svc, sts, cm := objs["Service/"+name], objs["StatefulSet/"+name], objs["ConfigMap/"+name]
		if svc == nil || sts == nil || cm == nil {
			t.Fatalf("%s: want a Service, a StatefulSet and a ConfigMap", name)
		}
		if svc.APIVersion != "v1" || sts.APIVersion != "apps/v1" || cm.APIVersion != "v1" {
			t.Errorf("%s: apiVersions %s %s %s", name, svc.APIVersion, sts.APIVersion, cm.APIVersion)
		}
		if svc.Spec.ClusterIP != "None" || !svc.Spec.PublishNotReadyAddresses {
			t.Errorf("Service/%s: want headless (clusterIP None) with publishNotReadyAddresses", name)
		}
		if sts.Spec.ServiceName != name || sts.Spec.Replicas != 3 {
			t.Errorf("StatefulSet/%s: serviceName %q replicas %d", name, sts.Spec.ServiceName, sts.Spec.Replicas)
		}
		labels := sts.Spec.Template.Metadata.Labels
		if !subset(selectorLabels(t, sts.Spec.Selector, "StatefulSet"), labels) {
			t.Errorf("StatefulSet/%s: selector does not match the pod labels", name)
		}
		if !subset(selectorLabels(t, svc.Spec.Selector, "Service"), labels) {
			t.Errorf("Service/%s: selector does not match the pod labels", name)
		}
		spec := sts.Spec.Template.Spec
		if len(spec.Containers) != 1 || len(spec.InitContainers) != 1 {
			t.Fatalf("StatefulSet/%s: want one container and one init container", name)
		}
		ctr := spec.Containers[0]
		if len(ctr.Ports) != 1 || len(svc.Spec.Ports) != 1 || ctr.Ports[0].Name != svc.Spec.Ports[0].TargetPort ||
			ctr.Ports[0].ContainerPort != svc.Spec.Ports[0].Port {
			t.Errorf("%s: the Service's port does not name the container's", name)
		}
		port := ctr.Ports[0].ContainerPort
		if ctr.ReadinessProbe == nil {
			t.Fatalf("%s: no readiness probe", name)
		}
		probeCmd := ctr.ReadinessProbe.Exec.Command
		checkVigilCommand(t, name+" readiness", probeCmd)
		if len(probeCmd) < 2 || probeCmd[1] != "probe" || !slicesEqual(flagValues(probeCmd, "addr"), []string{"127.0.0.1:" + strconv.Itoa(port)}) {
			t.Errorf("%s: readiness probe %q does not probe port %d", name, probeCmd, port)
		}
		for _, c := range append(spec.InitContainers, ctr) {
			if c.Image != "vigil:latest" {
				t.Errorf("%s/%s: image %q", name, c.Name, c.Image)
			}
			for _, e := range c.Env {
				if e.Name == "POD_NAME" && e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
					t.Errorf("%s/%s: POD_NAME from %q", name, c.Name, e.ValueFrom.FieldRef.FieldPath)
				}
			}
			for _, m := range c.VolumeMounts {
				ok := m.Name == sts.Spec.VolumeClaimTemplates[0].Metadata.Name
				for _, v := range spec.Volumes {
					ok = ok || v.Name == m.Name
				}
				if !ok {
					t.Errorf("%s/%s: mount of unknown volume %q", name, c.Name, m.Name)
				}
			}
		}
		for _, v := range spec.Volumes {
			if v.ConfigMap.Name != "" && v.ConfigMap.Name != name {
				t.Errorf("%s: volume of ConfigMap %q", name, v.ConfigMap.Name)
			}
		}
		checkVigilCommand(t, name+" init", spec.InitContainers[0].Command)
	}
	checkServerPods(t, objs)
	checkSentinelPods(t, objs)
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

// installed runs a pod's init container command (install-config) for pod
// into a temporary /etc and /data and returns the installed file.
func installed(t *testing.T, init k8sContainer, cm *k8sObject, etc, pod string) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range cm.Data {
		os.MkdirAll(filepath.Join(dir, etc), 0o755)
		os.WriteFile(filepath.Join(dir, etc, k), []byte(v), 0o644)
	}
	argv := expand(init.Command, pod)
	if len(argv) != 4 || argv[1] != "install-config" {
		t.Fatalf("init command %q", argv)
	}
	to := filepath.Join(dir, argv[3])
	var out, errb bytes.Buffer
	if code := run([]string{"vigil", "install-config", filepath.Join(dir, argv[2]), to}, &out, &errb); code != 0 {
		t.Fatalf("%s: install-config: exit %d: %s", pod, code, errb.String())
	}
	// The pod's /data is the test's: dir must exist for the parsers.
	data, err := os.ReadFile(to)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\ndir /data\n") {
		t.Fatalf("%s: the config does not put dir on the /data volume", pod)
	}
	os.WriteFile(to, []byte(strings.ReplaceAll(string(data), "\ndir /data\n", "\ndir "+filepath.Dir(to)+"\n")), 0o644)
	return to
}

func checkServerPods(t *testing.T, objs map[string]*k8sObject) {
	sts, cm := objs["StatefulSet/vigil-server"], objs["ConfigMap/vigil-server"]
	spec := sts.Spec.Template.Spec
	ctr := spec.Containers[0]
	for i := 0; i < sts.Spec.Replicas; i++ {
		pod := "vigil-server-" + strconv.Itoa(i)
		file := installed(t, spec.InitContainers[0], cm, "/etc/vigil", pod)
		argv := expand(ctr.Command, pod)
		if argv[0] != "/vigil-server" || argv[1] != "/data/vigil.conf" {
			t.Fatalf("server command %q", argv)
		}
		// The server's own parser, on the installed file plus the
		// command line, with dir pointing at the test's data directory.
		cfg, err := configs.Load(configs.LoadOptions{ConfigFile: file, Args: argv[2:]})
		if err != nil {
			t.Fatalf("%s: vigil-server rejects its config: %v", pod, err)
		}
		if cfg.ReplicaAnnounceIP != pod+".vigil-server" {
			t.Errorf("%s: replica-announce-ip %q", pod, cfg.ReplicaAnnounceIP)
		}
		wantMaster := "vigil-server-0.vigil-server"
		if i == 0 {
			wantMaster = ""
		}
		if cfg.ReplicaOf.Host != wantMaster || (i > 0 && cfg.ReplicaOf.Port != 6379) {
			t.Errorf("%s: replicaof %+v, want %q", pod, cfg.ReplicaOf, wantMaster)
		}
	}
	pre := ctr.Lifecycle.PreStop
	if pre == nil {
		t.Fatal("vigil-server: no preStop hook")
	}
	checkVigilCommand(t, "vigil-server preStop", pre.Exec.Command)
	if pre.Exec.Command[1] != "handover" {
		t.Errorf("preStop %q is not vigil handover", pre.Exec.Command)
	}
	ssts := objs["StatefulSet/vigil-sentinel"]
	sentinels := flagValues(pre.Exec.Command, "sentinel")
	if len(sentinels) != ssts.Spec.Replicas {
		t.Errorf("preStop names %d sentinels, the StatefulSet has %d", len(sentinels), ssts.Spec.Replicas)
	}
	for i, s := range sentinels {
		if want := "vigil-sentinel-" + strconv.Itoa(i) + ".vigil-sentinel:26379"; s != want {
			t.Errorf("preStop sentinel %q, want %q", s, want)
		}
	}
	if m := flagValues(pre.Exec.Command, "master"); len(m) != 1 || m[0] != "mymaster" {
		t.Errorf("preStop master %q", m)
	}
}

func checkSentinelPods(t *testing.T, objs map[string]*k8sObject) {
	sts, cm := objs["StatefulSet/vigil-sentinel"], objs["ConfigMap/vigil-sentinel"]
	spec := sts.Spec.Template.Spec
	ctr := spec.Containers[0]
	for i := 0; i < sts.Spec.Replicas; i++ {
		pod := "vigil-sentinel-" + strconv.Itoa(i)
		file := installed(t, spec.InitContainers[0], cm, "/etc/vigil", pod)
		argv := expand(ctr.Command, pod)
		if argv[0] != "/vigil-sentinel" || argv[1] != "/data/sentinel.conf" {
			t.Fatalf("sentinel command %q", argv)
		}
		// The monitored host must resolve when the sentinel loads its
		// file (as in the cluster, where the headless Service publishes
		// it): point the test's copy at localhost.
		data, _ := os.ReadFile(file)
		text := strings.ReplaceAll(string(data), "vigil-server-0.vigil-server", "localhost")
		os.WriteFile(file, []byte(text), 0o644)
		st, err := daemon.LoadConfig(file, argv[2:])
		if err != nil {
			t.Fatalf("%s: vigil-sentinel rejects its config: %v", pod, err)
		}
		sc := st.Sentinel
		if !sc.ResolveHostnames || !sc.AnnounceHostnames {
			t.Errorf("%s: resolve-hostnames %v announce-hostnames %v, want both yes", pod, sc.ResolveHostnames, sc.AnnounceHostnames)
		}
		if sc.AnnounceIP != pod+".vigil-sentinel" {
			t.Errorf("%s: announce-ip %q", pod, sc.AnnounceIP)
		}
		if len(sc.Masters) != 1 || sc.Masters[0].Name != "mymaster" || sc.Masters[0].IP != "localhost" || sc.Masters[0].Port != 6379 {
			t.Errorf("%s: masters %+v, want mymaster at vigil-server-0.vigil-server:6379", pod, sc.Masters)
		}
	}
	if !strings.Contains(cm.Data["sentinel.conf"], "sentinel monitor mymaster vigil-server-0.vigil-server 6379 2") {
		t.Error("sentinel.conf does not monitor vigil-server-0.vigil-server")
	}
}

// TestK8sManifestsKubectl decodes the manifests with kubectl's own scheme,
// offline (kubectl label --local needs no cluster).
func TestK8sManifestsKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	out, err := exec.Command(kubectl, "label", "--local", "-f", k8sDir, "vigil-check=1", "-o", "name").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	want := []string{"service/vigil-sentinel", "configmap/vigil-sentinel", "statefulset.apps/vigil-sentinel",
		"service/vigil-server", "configmap/vigil-server", "statefulset.apps/vigil-server"}
	if !slicesEqual(got, want) {
		t.Fatalf("kubectl decoded %q, want %q", got, want)
	}
}
