package drill

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

// groupsReport is the part of a --groups report.json this spec checks.
type groupsReport struct {
	Schedule []struct {
		Round     int    `json:"round"`
		Group     int    `json:"group"`
		GroupName string `json:"group_name"`
	} `json:"schedule"`
	Faults []struct {
		Round        int    `json:"round"`
		Group        string `json:"group"`
		Target       string `json:"target"`
		Start        int64  `json:"start_ns"`
		End          int64  `json:"end_ns"`
		SwitchMaster int64  `json:"switch_master_ns"`
		NewMaster    string `json:"new_master"`
		Error        string `json:"error"`
	} `json:"faults"`
	Events []struct {
		At      int64  `json:"at_ns"`
		Type    string `json:"event"`
		Payload string `json:"payload"`
	} `json:"events"`
	Counts struct {
		Total    int `json:"total"`
		WritesOK int `json:"writes_ok"`
	} `json:"counts"`
	Loss struct {
		Checked int   `json:"checked"`
		Lost    []any `json:"lost"`
	} `json:"loss"`
	UnavailableTotal int64 `json:"unavailable_total_ns"`
	Linearizability  struct {
		Result string `json:"result"`
		Ops    int    `json:"ops"`
	} `json:"linearizability"`
	History []struct {
		Key string `json:"key"`
	} `json:"history"`
	Groups []struct {
		MasterName    string `json:"master_name"`
		InitialMaster string `json:"initial_master"`
		FinalMaster   string `json:"final_master"`
		Rounds        []int  `json:"rounds"`
		Counts        struct {
			WritesOK int `json:"writes_ok"`
		} `json:"counts"`
		Loss struct {
			Checked int   `json:"checked"`
			Lost    []any `json:"lost"`
		} `json:"loss"`
		UnavailableTotal int64 `json:"unavailable_total_ns"`
		Linearizability  struct {
			Result string `json:"result"`
			Ops    int    `json:"ops"`
		} `json:"linearizability"`
	} `json:"groups"`
}

var _ = Describe("vigil drill --groups 2", Label("drill"), func() {
	It("kill-master over two groups behind the proxy: each round's fault fails over its own group only, and the report gives each group's figures and the totals", func() {
		dir := GinkgoT().TempDir()
		base := freeRange(6)
		sbase := freeRange(3) // never overlaps base's (integration.FreePorts)
		// Seed 3 draws group 1 for round 1 and group 2 for round 2.
		s, err := gexec.Start(exec.Command(vigilBin, "drill", "--groups", "2", "--server", "vigil", "--net", "proxy",
			"--fault", "kill-master", "--rounds", "2", "--seed", "3", "--clients", "2",
			"--down-after", "1s", "--failover-timeout", "2s", "--timeout", "45s",
			"--base-port", itoa(base), "--sentinel-base-port", itoa(sbase),
			"--dir", filepath.Join(dir, "data"), "--report", filepath.Join(dir, "report"), "--json"), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { s.Kill().Wait() })
		Eventually(s, 240*time.Second).Should(gexec.Exit(0))

		b, err := os.ReadFile(filepath.Join(dir, "report", "report.json"))
		Expect(err).NotTo(HaveOccurred())
		var r groupsReport
		Expect(json.Unmarshal(b, &r)).To(Succeed())
		servers := map[string][]string{"mymaster": {}, "mymaster-2": {}}
		for i := 0; i < 3; i++ {
			servers["mymaster"] = append(servers["mymaster"], "127.0.0.1:"+itoa(base+i))
			servers["mymaster-2"] = append(servers["mymaster-2"], "127.0.0.1:"+itoa(base+3+i))
		}

		Expect(r.Groups).To(HaveLen(2))
		Expect(r.Groups[0].MasterName).To(Equal("mymaster"))
		Expect(r.Groups[1].MasterName).To(Equal("mymaster-2"))
		Expect(r.Schedule).To(HaveLen(2))
		Expect(r.Schedule[0].GroupName).To(Equal("mymaster"))
		Expect(r.Schedule[1].GroupName).To(Equal("mymaster-2"))
		Expect(r.Faults).To(HaveLen(2))
		for i, f := range r.Faults {
			Expect(f.Error).To(BeEmpty())
			Expect(f.Group).To(Equal(r.Schedule[i].GroupName), "round %d acts on the scheduled group", f.Round)
			Expect(servers[f.Group]).To(ContainElement(f.Target), "round %d kills a server of its group", f.Round)
			Expect(f.SwitchMaster).To(BeNumerically(">=", 0), "round %d: a +switch-master", f.Round)
			Expect(servers[f.Group]).To(ContainElement(f.NewMaster), "round %d: the new master is in the group", f.Round)
			// Between the fault and its recovery only the faulted group
			// switched master.
			for _, e := range r.Events {
				if e.Type == "+switch-master" && e.At >= f.Start && e.At <= f.End {
					Expect(strings.Fields(e.Payload)[0]).To(Equal(f.Group), "round %d: %s", f.Round, e.Payload)
				}
			}
		}
		// Each group's own figures, and totals that are their sums.
		writes, checked, lost, linOps := 0, 0, 0, 0
		var unavailable int64
		for i, g := range r.Groups {
			Expect(g.Rounds).To(Equal([]int{i + 1}))
			Expect(g.InitialMaster).To(Equal(servers[g.MasterName][0]))
			Expect(servers[g.MasterName]).To(ContainElement(g.FinalMaster))
			Expect(g.FinalMaster).NotTo(Equal(g.InitialMaster), "%s failed over", g.MasterName)
			Expect(g.Counts.WritesOK).To(BeNumerically(">", 0), "%s took writes", g.MasterName)
			Expect(g.Loss.Checked).To(Equal(g.Counts.WritesOK))
			Expect(g.Linearizability.Result).To(BeElementOf("Ok", "Illegal", "Unknown"))
			Expect(g.Linearizability.Ops).To(BeNumerically(">", 0))
			writes += g.Counts.WritesOK
			checked += g.Loss.Checked
			lost += len(g.Loss.Lost)
			linOps += g.Linearizability.Ops
			unavailable += g.UnavailableTotal
		}
		Expect(r.Counts.WritesOK).To(Equal(writes))
		Expect(r.Loss.Checked).To(Equal(checked))
		Expect(r.Loss.Lost).To(HaveLen(lost))
		Expect(r.Linearizability.Ops).To(Equal(linOps))
		Expect(r.UnavailableTotal).To(Equal(unavailable))
		Expect(r.Counts.Total).To(Equal(len(r.History)))
		prefixed := map[string]bool{}
		for _, op := range r.History {
			name, _, _ := strings.Cut(op.Key, "/")
			prefixed[name] = true
		}
		Expect(prefixed).To(Equal(map[string]bool{"mymaster": true, "mymaster-2": true}), "history keys name their group")

		text := string(s.Out.Contents())
		Expect(text).To(ContainSubstring("groups (2; the figures below them are the totals)"))
		Expect(text).To(MatchRegexp(`round 1: kill-master of 127\.0\.0\.1:\d+ in group mymaster at`))
		Expect(text).To(MatchRegexp(`round 2: kill-master of 127\.0\.0\.1:\d+ in group mymaster-2 at`))
		svg, err := os.Stat(filepath.Join(dir, "report", "timeline.svg"))
		Expect(err).NotTo(HaveOccurred())
		Expect(svg.Size()).To(BeNumerically(">", 0))
	})
})
