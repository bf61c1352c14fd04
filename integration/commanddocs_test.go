package integration

import (
	"bufio"
	"net"
	"os/exec"
	"sort"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/vigil-kv/vigil/internal/resp"
)

// startRealRedis starts Debian's redis-server (whatever ServerBin is) on a
// free port, skipping the spec when it is not installed, and returns its
// address.
func startRealRedis() string {
	GinkgoHelper()
	bin := RequireTool("redis-server", "apt-get install -y redis-server")
	port := FreePort()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", TempDir())
	s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { s.Kill().Wait(ExitTimeout) })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	Eventually(func() error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	}).WithTimeout(StartTimeout).Should(Succeed())
	return addr
}

// canonicalReply parses a raw COMMAND DOCS or COMMAND INFO reply and encodes
// it again with subcommands in name order: Redis lists them in its dict's
// order, which changes with every process. Everything else keeps its exact
// bytes.
func canonicalReply(raw string) string {
	GinkgoHelper()
	v, err := resp.ReadValue(bufio.NewReader(strings.NewReader(raw)), resp.DefaultReplyLimits)
	Expect(err).NotTo(HaveOccurred(), "reply %q", raw)
	sortSubcommands(&v)
	var b strings.Builder
	encodeValue(&b, v)
	return b.String()
}

// sortSubcommands sorts, at any depth, the pairs of a "subcommands" map
// (COMMAND DOCS) and the entries of COMMAND INFO subcommand lists (the 10th
// element of a 10-element entry whose first element is a name).
func sortSubcommands(v *resp.Value) {
	for i := range v.Elems {
		sortSubcommands(&v.Elems[i])
	}
	if len(v.Elems) == 10 && v.Elems[0].Kind == resp.KindBulk && v.Elems[1].Kind == resp.KindInt {
		subs := v.Elems[9].Elems
		sort.SliceStable(subs, func(a, b int) bool { return subs[a].Elems[0].Str < subs[b].Elems[0].Str })
	}
	for i := 0; i+1 < len(v.Elems); i += 2 {
		if v.Elems[i].Kind != resp.KindBulk || v.Elems[i].Str != "subcommands" {
			continue
		}
		m := v.Elems[i+1].Elems
		type pair struct{ k, v resp.Value }
		ps := make([]pair, len(m)/2)
		for j := range ps {
			ps[j] = pair{m[2*j], m[2*j+1]}
		}
		sort.SliceStable(ps, func(a, b int) bool { return ps[a].k.Str < ps[b].k.Str })
		for j, p := range ps {
			m[2*j], m[2*j+1] = p.k, p.v
		}
	}
}

func encodeValue(b *strings.Builder, v resp.Value) {
	switch v.Kind {
	case resp.KindSimple, resp.KindError:
		b.WriteString(string(v.Kind) + v.Str + "\r\n")
	case resp.KindInt:
		b.WriteString(":" + strconv.FormatInt(v.Int, 10) + "\r\n")
	case resp.KindBulk:
		b.WriteString("$" + strconv.Itoa(len(v.Str)) + "\r\n" + v.Str + "\r\n")
	case resp.KindNull:
		b.WriteString("_\r\n")
	case resp.KindMap:
		b.WriteString("%" + strconv.Itoa(len(v.Elems)/2) + "\r\n")
	default:
		b.WriteString(string(v.Kind) + strconv.Itoa(len(v.Elems)) + "\r\n")
	}
	for _, e := range v.Elems {
		encodeValue(b, e)
	}
}

var _ = Describe("COMMAND DOCS and COMMAND INFO against redis-server 7.0.15", Label("interop"), func() {
	It("match Redis's raw replies for every command Vigil implements, in RESP2 and RESP3", func() {
		if IsRealRedis() {
			Skip("the server under test is Redis itself")
		}
		redisAddr := startRealRedis()
		srv := StartServer()
		for _, proto := range []string{"2", "3"} {
			v, r := DialRaw(srv.Addr()), DialRaw(redisAddr)
			v.Do("HELLO", proto)
			r.Do("HELLO", proto)
			list, err := resp.ReadValue(bufio.NewReader(strings.NewReader(v.Do("COMMAND", "LIST"))), resp.DefaultReplyLimits)
			Expect(err).NotTo(HaveOccurred())
			Expect(len(list.Elems)).To(BeNumerically(">", 50))
			implemented := map[string]bool{}
			for _, e := range list.Elems {
				implemented[e.Str] = true
			}
			for _, e := range list.Elems {
				name := e.Str
				for _, sub := range []string{"DOCS", "INFO"} {
					got, want := v.Do("COMMAND", sub, name), r.Do("COMMAND", sub, name)
					if got == want {
						continue
					}
					if !strings.Contains(name, "|") && strings.Contains(want, "|") {
						// A container: Vigil may implement fewer
						// subcommands, in another order.
						want = canonicalReply(dropSubcommands(want, implemented))
						got = canonicalReply(got)
					}
					Expect(got).To(Equal(want), "COMMAND %s %s (RESP%s)", sub, name, proto)
				}
			}
		}
	})
})

// dropSubcommands removes from a raw reply of one container the
// subcommands Vigil does not implement.
func dropSubcommands(raw string, keep map[string]bool) string {
	GinkgoHelper()
	v, err := resp.ReadValue(bufio.NewReader(strings.NewReader(raw)), resp.DefaultReplyLimits)
	Expect(err).NotTo(HaveOccurred())
	var filter func(v *resp.Value)
	filter = func(v *resp.Value) {
		for i := range v.Elems {
			filter(&v.Elems[i])
		}
		if len(v.Elems) == 10 && v.Elems[0].Kind == resp.KindBulk && v.Elems[1].Kind == resp.KindInt {
			var kept []resp.Value
			for _, s := range v.Elems[9].Elems {
				if keep[s.Elems[0].Str] {
					kept = append(kept, s)
				}
			}
			v.Elems[9].Elems = kept
		}
		for i := 0; i+1 < len(v.Elems); i += 2 {
			if v.Elems[i].Kind == resp.KindBulk && v.Elems[i].Str == "subcommands" {
				var kept []resp.Value
				m := v.Elems[i+1].Elems
				for j := 0; j+1 < len(m); j += 2 {
					if keep[m[j].Str] {
						kept = append(kept, m[j], m[j+1])
					}
				}
				v.Elems[i+1].Elems = kept
			}
		}
	}
	filter(&v)
	var b strings.Builder
	encodeValue(&b, v)
	return b.String()
}
