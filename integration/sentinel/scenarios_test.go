package sentinel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

// The scenarios of Redis's own sentinel tests (tests/sentinel/tests/00-base
// to 13-info-command), in Redis's order, over one long-lived deployment: five
// sentinels, a master and four replicas of Debian's redis-server. Each
// scenario starts from the state the previous one left (the current master
// is whichever replica the last failover promoted); only the scenarios that
// kill or restart processes do so. The list runs twice: with five sentinels
// under test, and with three under test plus two redis-sentinel.
//
// As in Redis's tests, the sentinels run with short timers set through
// SENTINEL DEBUG (scenarioDebug) and per master down-after-milliseconds 2000
// (scenarioDownAfter), failover-timeout 5000.
var _ = Describe("Sentinel scenarios", Label("interop", "failover", "slow", "scenarios"), func() {
	scenarios("5 sentinels under test", func() []string { return Times(5, SentinelBin) })
	scenarios("3 sentinels under test and 2 redis-sentinel", func() []string {
		return append(Times(3, SentinelBin), Times(2, RequireRedisSentinel())...)
	})
})

// How long a scenario watches for something that must not happen (a
// failover without quorum or without a majority): several down-after
// periods, election rounds and INFO periods.
const notHappening = 3 * time.Second

func scenarios(group string, bins func() []string) {
	Context(group, Ordered, func() {
		var d *deployment
		var all []*Sentinel
		ctx := context.Background()

		BeforeAll(func() {
			RequireSentinel()
			d = startDeployment(4, 3, bins()...)
			all = d.Sentinels
		})

		// dataDo runs a command on a data server.
		dataDo := func(port int, args ...any) any {
			GinkgoHelper()
			v, err := d.Data(port).Do(ctx, args...).Result()
			Expect(err).NotTo(HaveOccurred(), "%v on data server %d", args, port)
			return v
		}
		// failover kills the master, waits until the given sentinels name
		// a replica, restarts the old master and returns the new port.
		crashAndFailover := func(watchers []*Sentinel) int {
			GinkgoHelper()
			old := d.Master
			Expect(old.Session.ExitCode()).To(Equal(-1))
			old.Kill()
			newPort := d.waitSwitch(old.Port, watchers)
			d.restartData(old)
			d.promote(newPort)
			d.ExpectMaster(newPort)
			return newPort
		}
		// replicasFollow waits until every running replica replicates from
		// the master.
		replicasFollow := func(timeout time.Duration) {
			GinkgoHelper()
			for _, r := range d.Replicas {
				if r.Session.ExitCode() == -1 {
					d.ExpectReplicaOf(r.Port, d.Master.Port, timeout)
				}
			}
		}

		// 00-base.tcl

		It("monitors the master, the replicas and the other sentinels", func() {
			for _, s := range all {
				ms, err := s.SC.Masters(ctx).Result()
				Expect(err).NotTo(HaveOccurred())
				Expect(ms).To(HaveLen(1))
				m, err := s.master()
				Expect(err).NotTo(HaveOccurred())
				Expect(m).To(HaveKeyWithValue("name", MasterName))
				Expect(m).To(HaveKeyWithValue("port", strconv.Itoa(d.Master.Port)))
				Expect(m).To(HaveKeyWithValue("flags", "master"))
				Expect(m).To(HaveKeyWithValue("num-slaves", "4"))
				Expect(m).To(HaveKeyWithValue("num-other-sentinels", "4"))
				Expect(m).To(HaveKeyWithValue("quorum", "3"))
			}
			sameShape(all)
		})

		It("fails over when the master is killed, and the old master rejoins as a replica (00-base)", func() {
			old := d.Master
			crashAndFailover(all)
			By("all the other replicas point to the new master")
			for _, r := range d.Replicas {
				if r != old {
					d.ExpectReplicaOf(r.Port, d.Master.Port, FailoverWait)
				}
			}
			By("the old master is eventually reconfigured as a replica")
			d.ExpectReplicaOf(old.Port, d.Master.Port, ConvertWait)
		})

		It("does not reach ODOWN with a quorum above the number of sentinels (00-base)", func() {
			d.settle()
			setAll(all, "quorum", "6")
			old := d.Master
			old.Kill()
			for _, s := range all {
				Eventually(s.flags).WithTimeout(FailoverWait).WithPolling(Poll).Should(ContainSubstring("s_down"), s.Name())
			}
			Consistently(func(g Gomega) {
				for _, s := range all {
					g.Expect(s.flags()).NotTo(ContainSubstring("o_down"), s.Name())
					g.Expect(s.MasterAddr()).To(Equal(Addr(old.Port)), s.Name())
				}
			}).WithTimeout(notHappening).WithPolling(200 * time.Millisecond).Should(Succeed())
			d.restartData(old)
			for _, s := range all {
				Eventually(s.flags).WithTimeout(FailoverWait).WithPolling(Poll).Should(Equal("master"), s.Name())
			}
		})

		It("does not fail over without a majority of the sentinels' votes (00-base)", func() {
			setAll(all, "quorum", "3")
			d.settle()
			By("the majority of the sentinels crashes; the other two agree on ODOWN with quorum 2")
			dead, alive := all[:3], all[3:]
			for _, s := range dead {
				s.Kill()
			}
			setAll(alive, "quorum", "2")
			ev := Watch(alive...)
			old := d.Master
			old.Kill()
			for _, s := range alive {
				Eventually(s.flags).WithTimeout(FailoverWait).WithPolling(Poll).Should(ContainSubstring("o_down"), s.Name())
			}
			Consistently(func(g Gomega) {
				for _, s := range alive {
					g.Expect(s.MasterAddr()).To(Equal(Addr(old.Port)), s.Name())
				}
			}).WithTimeout(notHappening).WithPolling(200 * time.Millisecond).Should(Succeed())
			Expect(ev.Payloads(0, "+elected-leader")).To(BeEmpty(), ev.String())
			Expect(ev.Payloads(0, "+switch-master")).To(BeEmpty(), ev.String())

			By("the master and the crashed sentinels come back")
			// Quorum 3 first and the survivors' election given up before
			// the others return: returning voters would otherwise elect a
			// survivor still waiting for votes, and fail over a master that
			// is up again.
			setAll(alive, "quorum", "3")
			d.restartData(old)
			for _, s := range alive {
				Eventually(func(g Gomega) {
					m, err := s.master()
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(m).To(HaveKeyWithValue("flags", "master"))
					g.Expect(m).NotTo(HaveKey("failover-state"))
				}).WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed(), s.Name())
			}
			for _, s := range dead {
				d.restartSentinel(s)
			}
			d.settle()
		})

		It("fails over with quorum set to all the sentinels (00-base)", func() {
			setAll(all, "quorum", "5")
			old := d.Master
			crashAndFailover(all)
			setAll(all, "quorum", "3")
			d.ExpectReplicaOf(old.Port, d.Master.Port, ConvertWait)
		})

		// 01-conf-update.tcl

		It("fails over with a sentinel crashed, which learns the new configuration when restarted (01-conf-update)", func() {
			d.settle()
			s1 := all[1]
			s1.Kill()
			others := append([]*Sentinel{all[0]}, all[2:]...)
			old := d.Master.Port
			crashAndFailover(others)
			logBefore := len(s1.Log())
			d.restartSentinel(s1)
			Eventually(s1.MasterAddr).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Equal(Addr(d.Master.Port)))
			Expect(s1.Log()[logBefore:]).To(MatchRegexp(
				`\+config-update-from sentinel [0-9a-f]{40} 127\.0\.0\.1 \d+ @ %s 127\.0\.0\.1 %d`, MasterName, old))
			Eventually(func() (string, error) {
				b, err := os.ReadFile(s1.ConfPath)
				return string(b), err
			}).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(MatchRegexp(
				`(?m)^sentinel monitor %s 127\.0\.0\.1 %d 3$`, MasterName, d.Master.Port), "the rewritten config")
		})

		// 01-conf-update.tcl's "Update log level" is Redis 7.2's: 7.0's
		// SENTINEL CONFIG knows six parameters and rejects loglevel.
		It("answers SENTINEL CONFIG GET and rejects loglevel as Redis 7.0 does (01-conf-update)", func() {
			for _, s := range all {
				Expect(pairs(s.do("SENTINEL", "CONFIG", "GET", "*"))).To(Equal(map[string]string{
					"resolve-hostnames": "no", "announce-hostnames": "no", "announce-ip": "", "announce-port": "0",
					"sentinel-user": "", "sentinel-pass": "",
				}), s.Name())
				Expect(pairs(s.do("SENTINEL", "CONFIG", "GET", "loglevel"))).To(BeEmpty(), s.Name())
				Expect(s.C.Do(ctx, "SENTINEL", "CONFIG", "SET", "loglevel", "warning").Err()).To(
					MatchError("ERR Invalid argument 'loglevel' to SENTINEL CONFIG SET"), s.Name())
			}
		})

		// 02-slaves-reconf.tcl

		It("reconfigures the replicas, parallel-syncs at a time, and a replica that was down later (02-slaves-reconf)", func() {
			d.settle()
			setAll(all, "parallel-syncs", "2")
			for _, s := range all {
				m, err := s.master()
				Expect(err).NotTo(HaveOccurred())
				Expect(m).To(HaveKeyWithValue("parallel-syncs", "2"))
			}
			ev := Watch(all...)
			old := d.Master
			crashAndFailover(all)
			replicasFollow(FailoverWait)
			leaders := ev.Publishers("+failover-end", ".")
			Eventually(func() []int { leaders = ev.Publishers("+failover-end", "."); return leaders }).
				WithTimeout(FailoverWait).WithPolling(Poll).Should(HaveLen(1), ev.String())
			inFlight, sent := reconfInFlight(ev, leaders[0])
			Expect(sent).To(BeNumerically(">=", 3), "SLAVEOF sent to the three running replicas\n%s", ev)
			Expect(inFlight).To(Equal(2), "at most parallel-syncs replicas are reconfigured at a time\n%s", ev)
			d.ExpectReplicaOf(old.Port, d.Master.Port, ConvertWait)
			setAll(all, "parallel-syncs", "1")

			By("a replica is killed, then the master")
			var down *integration.Server
			for _, r := range d.Replicas {
				down = r
				break
			}
			down.Kill()
			crashAndFailover(all)
			replicasFollow(FailoverWait)

			By("the failover ends")
			for _, s := range all {
				Eventually(func(g Gomega) {
					m, err := s.master()
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(m).NotTo(HaveKey("failover-state"))
				}).WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed(), s.Name())
			}

			By("the killed replica, restarted, is reconfigured")
			d.restartData(down)
			replicasFollow(ConvertWait)
		})

		// 03-runtime-reconf.tcl

		It("monitors servers that require a password once given auth-pass (03-runtime-reconf)", func() {
			d.settle()
			By("requirepass and masterauth on every server")
			for _, srv := range d.servers {
				Expect(dataDo(srv.Port, "CONFIG", "SET", "masterauth", "secret")).To(Equal("OK"))
			}
			for _, srv := range d.servers {
				Expect(dataDo(srv.Port, "CONFIG", "SET", "requirepass", "secret")).To(Equal("OK"))
			}
			d.setPassword("secret")
			DeferCleanup(func() {
				for _, srv := range d.servers {
					_ = d.Data(srv.Port).Do(ctx, "CONFIG", "SET", "requirepass", "").Err()
					_ = d.Data(srv.Port).Do(ctx, "CONFIG", "SET", "masterauth", "").Err()
					_ = d.Data(srv.Port).Do(ctx, "CONFIG", "REWRITE").Err()
				}
				d.setPassword("")
			})

			By("the master monitored again (quorum 6: no failover) with auth-pass")
			for _, s := range all {
				Expect(s.do("SENTINEL", "REMOVE", MasterName)).To(Equal("OK"))
				Expect(s.do("SENTINEL", "MONITOR", MasterName, "127.0.0.1", strconv.Itoa(d.Master.Port), "6")).To(Equal("OK"))
				Expect(s.do("SENTINEL", "SET", MasterName, "down-after-milliseconds", strconv.Itoa(scenarioDownAfter),
					"failover-timeout", strconv.Itoa(FailoverTimeout), "auth-pass", "secret")).To(Equal("OK"))
			}
			d.WaitDiscovery()
			for _, s := range all {
				Eventually(s.flags).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Equal("master"), s.Name())
			}
			Consistently(func(g Gomega) {
				for _, s := range all {
					g.Expect(s.flags()).To(Equal("master"), s.Name())
					reps, err := s.Replicas()
					g.Expect(err).NotTo(HaveOccurred())
					for _, r := range reps {
						g.Expect(r["flags"]).To(Equal("slave"), s.Name())
					}
				}
			}).WithTimeout(2 * scenarioDownAfter * time.Millisecond).WithPolling(200 * time.Millisecond).Should(Succeed())

			By("the servers without a password again; quorum 3, master-reboot-down-after-period")
			for _, srv := range d.servers {
				Expect(dataDo(srv.Port, "CONFIG", "SET", "requirepass", "")).To(Equal("OK"))
				Expect(dataDo(srv.Port, "CONFIG", "SET", "masterauth", "")).To(Equal("OK"))
				Expect(dataDo(srv.Port, "CONFIG", "REWRITE")).To(Equal("OK"))
			}
			d.setPassword("")
			setAll(all, "auth-pass", "", "quorum", "3", "master-reboot-down-after-period", "5000")
			for _, s := range all {
				m, err := s.master()
				Expect(err).NotTo(HaveOccurred())
				// Redis 7.0 lists it nowhere but in the rewritten file.
				Expect(m).NotTo(HaveKey("master-reboot-down-after-period"))
				Expect(m).To(HaveKeyWithValue("quorum", "3"))
				Eventually(func() (string, error) {
					b, err := os.ReadFile(s.ConfPath)
					return string(b), err
				}).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(MatchRegexp(
					`(?m)^sentinel master-reboot-down-after-period %s 5000$`, MasterName), s.Name())
			}
			setAll(all, "master-reboot-down-after-period", "0")
			d.settle()
		})

		// monitorAgain removes the master from every sentinel and monitors
		// it again with quorum (above the sentinel count: no failover),
		// the scenarios' timers and the extra SENTINEL SET arguments
		// (03-runtime-reconf.tcl's re_monitor_mymaster).
		monitorAgain := func(quorum int, set ...any) {
			GinkgoHelper()
			for _, s := range all {
				Expect(s.do("SENTINEL", "REMOVE", MasterName)).To(Equal("OK"))
				Expect(s.do("SENTINEL", "MONITOR", MasterName, "127.0.0.1", strconv.Itoa(d.Master.Port), strconv.Itoa(quorum))).To(Equal("OK"))
				Expect(s.do(append([]any{"SENTINEL", "SET", MasterName, "down-after-milliseconds", strconv.Itoa(scenarioDownAfter),
					"failover-timeout", strconv.Itoa(FailoverTimeout)}, set...)...)).To(Equal("OK"))
			}
		}
		// noneDown waits until every sentinel lists every replica and
		// flags neither the master nor a replica down, then checks that
		// this holds for twice down-after-milliseconds: a sentinel whose
		// PINGs are refused (-NOAUTH) would flag SDOWN in that time
		// (03-runtime-reconf.tcl's check_instances_status).
		noneDown := func() {
			GinkgoHelper()
			check := func(g Gomega, s *Sentinel) {
				m, err := s.master()
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(m["flags"]).NotTo(ContainSubstring("down"), "%s: master", s.Name())
				reps, err := s.Replicas()
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(reps).To(HaveLen(len(d.Replicas)), s.Name())
				for _, r := range reps {
					g.Expect(r["flags"]).NotTo(ContainSubstring("down"), "%s: replica %s", s.Name(), r["port"])
				}
			}
			for _, s := range all {
				Eventually(func(g Gomega) { check(g, s) }).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Succeed())
			}
			Consistently(func(g Gomega) {
				for _, s := range all {
					check(g, s)
				}
			}).WithTimeout(2 * scenarioDownAfter * time.Millisecond).WithPolling(200 * time.Millisecond).Should(Succeed())
		}

		It("monitors a master that requires a password only once monitored, its replicas before (03-runtime-reconf)", func() {
			d.settle()
			master := d.Master.Port
			for _, srv := range d.servers {
				Expect(dataDo(srv.Port, "CONFIG", "SET", "masterauth", "secret")).To(Equal("OK"))
			}
			for _, r := range d.Replicas {
				Expect(dataDo(r.Port, "CONFIG", "SET", "requirepass", "secret")).To(Equal("OK"))
			}
			d.setAuth("", "secret", d.ReplicaPorts()...)
			DeferCleanup(func() {
				for _, srv := range d.servers {
					_ = d.Data(srv.Port).Do(ctx, "CONFIG", "SET", "requirepass", "").Err()
					_ = d.Data(srv.Port).Do(ctx, "CONFIG", "SET", "masterauth", "").Err()
				}
				d.setPassword("")
			})
			By("monitored again while only the replicas require a password")
			monitorAgain(len(all) + 1)
			Expect(dataDo(master, "CONFIG", "SET", "requirepass", "secret")).To(Equal("OK"))
			d.setAuth("", "secret", master)
			setAll(all, "auth-pass", "secret")
			noneDown()

			By("no password again; quorum 3")
			for _, srv := range d.servers {
				Expect(dataDo(srv.Port, "CONFIG", "SET", "requirepass", "")).To(Equal("OK"))
				Expect(dataDo(srv.Port, "CONFIG", "SET", "masterauth", "")).To(Equal("OK"))
			}
			d.setPassword("")
			setAll(all, "auth-pass", "", "quorum", "3")
			d.settle()
		})

		It("monitors servers with an ACL user once given auth-user and auth-pass, also when only the replicas have it (03-runtime-reconf)", func() {
			d.settle()
			const user, pass = "testuser", "secret"
			// 03-runtime-reconf.tcl's setup_server_acl and
			// teardown_server_acl.
			setupACL := func(port int) {
				GinkgoHelper()
				Expect(dataDo(port, "ACL", "SETUSER", user, ">"+pass, "+@all", "on")).To(Equal("OK"))
				Expect(dataDo(port, "ACL", "SETUSER", "default", "off")).To(Equal("OK"))
				_ = d.Data(port).Do(ctx, "CLIENT", "KILL", "USER", "default", "SKIPME", "no").Err()
				d.setAuth(user, pass, port)
				Expect(dataDo(port, "ACL", "WHOAMI")).To(Equal(user))
				Expect(dataDo(port, "CONFIG", "SET", "masteruser", user)).To(Equal("OK"))
				Expect(dataDo(port, "CONFIG", "SET", "masterauth", pass)).To(Equal("OK"))
			}
			teardownACL := func(port int) {
				GinkgoHelper()
				Expect(dataDo(port, "ACL", "SETUSER", "default", "on")).To(Equal("OK"))
				// (DELUSER also closes this connection, after the reply.)
				Expect(dataDo(port, "ACL", "DELUSER", user)).To(Equal(int64(1)))
				d.setAuth("", "", port)
				Expect(dataDo(port, "CONFIG", "SET", "masteruser", "")).To(Equal("OK"))
				Expect(dataDo(port, "CONFIG", "SET", "masterauth", "")).To(Equal("OK"))
			}
			// CLIENT KILL USER default cuts the sentinels off the master:
			// no failover meanwhile.
			setAll(all, "quorum", strconv.Itoa(len(all)+1))
			for _, srv := range d.servers {
				setupACL(srv.Port)
			}
			DeferCleanup(func() { // (the user is gone when all went well)
				for _, srv := range d.servers {
					d.setAuth(user, pass, srv.Port)
					_ = d.Data(srv.Port).Do(ctx, "ACL", "SETUSER", "default", "on").Err()
					_ = d.Data(srv.Port).Do(ctx, "ACL", "DELUSER", user).Err()
					d.setAuth("", "", srv.Port)
					_ = d.Data(srv.Port).Do(ctx, "CONFIG", "SET", "masteruser", "").Err()
					_ = d.Data(srv.Port).Do(ctx, "CONFIG", "SET", "masterauth", "").Err()
				}
			})

			By("every server has the user when monitored again")
			monitorAgain(len(all)+1, "auth-user", user, "auth-pass", pass)
			noneDown()

			By("only the replicas have the user when monitored again; then the master too")
			master := d.Master.Port
			teardownACL(master)
			monitorAgain(len(all) + 1)
			setupACL(master)
			setAll(all, "auth-user", user, "auth-pass", pass)
			noneDown()

			By("the default user again everywhere; quorum 3")
			for _, srv := range d.servers {
				teardownACL(srv.Port)
			}
			setAll(all, "auth-user", "", "auth-pass", "", "quorum", "3")
			d.settle()
		})

		// 05-manual.tcl

		It("fails over on SENTINEL FAILOVER (05-manual)", func() {
			d.settle()
			old := d.Master
			Expect(all[0].do("SENTINEL", "FAILOVER", MasterName)).To(Equal("OK"))
			newPort := d.waitSwitch(old.Port, all)
			d.promote(newPort)
			d.ExpectMaster(newPort)
			replicasFollow(FailoverWait)
			d.ExpectReplicaOf(old.Port, newPort, ConvertWait)
		})

		// 06-ckquorum.tcl

		It("answers SENTINEL CKQUORUM (06-ckquorum)", func() {
			d.settle()
			ok := "OK 5 usable Sentinels. Quorum and failover authorization can be reached"
			for _, s := range all {
				Expect(s.do("SENTINEL", "CKQUORUM", MasterName)).To(Equal(ok), s.Name())
			}
			s0 := all[0]
			Expect(s0.do("SENTINEL", "SET", MasterName, "quorum", "6")).To(Equal("OK"))
			Expect(s0.C.Do(ctx, "SENTINEL", "CKQUORUM", MasterName).Err()).To(MatchError(
				"NOQUORUM 5 usable Sentinels. Not enough available Sentinels to reach the specified quorum for this master"))
			Expect(s0.do("SENTINEL", "SET", MasterName, "quorum", "1")).To(Equal("OK"))
			for _, s := range all[1:4] {
				s.Kill()
			}
			Eventually(func() error { return s0.C.Do(ctx, "SENTINEL", "CKQUORUM", MasterName).Err() }).
				WithTimeout(DiscoveryWait).WithPolling(Poll).Should(MatchError(
				"NOQUORUM 2 usable Sentinels. Not enough available Sentinels to reach the majority and authorize a failover"))
			Expect(s0.do("SENTINEL", "SET", MasterName, "quorum", "3")).To(Equal("OK"))
			for _, s := range all[1:4] {
				d.restartSentinel(s)
			}
			d.settle()
			for _, s := range all {
				Eventually(func() (any, error) { return s.C.Do(ctx, "SENTINEL", "CKQUORUM", MasterName).Result() }).
					WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Equal(ok), s.Name())
			}
		})

		// 07-down-conditions.tcl

		It("sees instances down: stopped, crashed, reporting role:slave or answering PING with an error (07-down-conditions)", func() {
			d.settle()
			setAll(all, "quorum", "6") // no failover in this scenario
			up := func() {
				GinkgoHelper()
				for _, s := range all {
					Eventually(s.flags).WithTimeout(FailoverWait).WithPolling(Poll).Should(Equal("master"), s.Name())
				}
			}
			down := func() {
				GinkgoHelper()
				for _, s := range all {
					Eventually(s.flags).WithTimeout(FailoverWait).WithPolling(Poll).Should(ContainSubstring("s_down"), s.Name())
				}
			}

			By("SDOWN of a master that does not answer (SIGSTOP)")
			Stop(d.Master)
			down()
			Continue(d.Master)
			up()

			By("SDOWN of a crashed master")
			d.Master.Kill()
			down()
			d.restartData(d.Master)
			up()

			By("SDOWN of a master that reports role:slave")
			Expect(dataDo(d.Master.Port, "REPLICAOF", "127.0.0.1", strconv.Itoa(integration.FreePort()))).To(Equal("OK"))
			down()
			Expect(dataDo(d.Master.Port, "REPLICAOF", "NO", "ONE")).To(Equal("OK"))
			up()

			By("SDOWN of a master whose BGSAVE failed: it answers PING with -MISCONF")
			// 07-down-conditions.tcl points dir and dbfilename at a path the
			// snapshot cannot be renamed to; both are protected configs, so
			// here the snapshot's name is taken by a directory: rename(2)
			// fails with EISDIR, even as root.
			m := d.Master
			dump := filepath.Join(m.Dir, "dump.rdb")
			Expect(os.RemoveAll(dump)).To(Succeed())
			Expect(os.Mkdir(dump, 0o755)).To(Succeed())
			DeferCleanup(func() { _ = os.Remove(dump) })
			lastBgsave := func() (string, error) {
				info, err := d.Data(m.Port).Info(ctx, "persistence").Result()
				if InfoField(info, "rdb_bgsave_in_progress") != "0" {
					return "in progress", err
				}
				return InfoField(info, "rdb_last_bgsave_status"), err
			}
			Expect(dataDo(m.Port, "CONFIG", "SET", "save", "1000000 1000000")).To(Equal("OK"))
			Expect(dataDo(m.Port, "BGSAVE")).To(HavePrefix("Background saving"))
			Eventually(lastBgsave).WithTimeout(FailoverWait).WithPolling(Poll).Should(Equal("err"))
			Expect(d.Data(m.Port).Ping(ctx).Err()).To(MatchError(HavePrefix("MISCONF ")))
			down()
			Expect(os.Remove(dump)).To(Succeed())
			Expect(dataDo(m.Port, "CONFIG", "SET", "save", "")).To(Equal("OK"))
			Expect(dataDo(m.Port, "BGSAVE")).To(HavePrefix("Background saving"))
			Eventually(lastBgsave).WithTimeout(FailoverWait).WithPolling(Poll).Should(Equal("ok"))
			Expect(d.Data(m.Port).Ping(ctx).Err()).NotTo(HaveOccurred())
			up()

			By("SDOWN when PING is renamed to PONG")
			setAll(all, "rename-command", "PING", "PONG")
			down()
			setAll(all, "rename-command", "PING", "PING")
			up()

			By("SDOWN of a replica that is down, and back")
			r := d.Replicas[0]
			r.Kill()
			for _, s := range all {
				Eventually(func() ([]map[string]string, error) { return s.Replicas() }).WithTimeout(FailoverWait).WithPolling(Poll).
					Should(WithTransform(func(reps []map[string]string) string { return flagsOf(reps, r.Port) },
						ContainSubstring("s_down")), s.Name())
			}
			d.restartData(r)
			for _, s := range all {
				Eventually(func() ([]map[string]string, error) { return s.Replicas() }).WithTimeout(FailoverWait).WithPolling(Poll).
					Should(WithTransform(func(reps []map[string]string) string { return flagsOf(reps, r.Port) },
						Equal("slave")), s.Name())
			}

			By("SDOWN of a sentinel that does not answer (SIGSTOP), and back")
			stopped := all[4]
			Stop(stopped.Server)
			for _, s := range all[:4] {
				Eventually(func() ([]map[string]string, error) { return s.Others() }).WithTimeout(FailoverWait).WithPolling(Poll).
					Should(WithTransform(func(o []map[string]string) string { return flagsOf(o, stopped.Port) },
						ContainSubstring("s_down")), s.Name())
			}
			Continue(stopped.Server)
			for _, s := range all[:4] {
				Eventually(func() ([]map[string]string, error) { return s.Others() }).WithTimeout(FailoverWait).WithPolling(Poll).
					Should(WithTransform(func(o []map[string]string) string { return flagsOf(o, stopped.Port) },
						Equal("sentinel")), s.Name())
			}
			setAll(all, "quorum", "3")
			d.settle()
		})

		// 08-hostname-conf.tcl

		It("announces hostnames, and addresses again with announce-hostnames no (08-hostname-conf)", func() {
			d.settle()
			remonitor := func(host string) {
				GinkgoHelper()
				for _, s := range all {
					Expect(s.do("SENTINEL", "REMOVE", MasterName)).To(Equal("OK"))
					Expect(s.do("SENTINEL", "MONITOR", MasterName, host, strconv.Itoa(d.Master.Port), "3")).To(Equal("OK"))
					Expect(s.do("SENTINEL", "SET", MasterName, "down-after-milliseconds", strconv.Itoa(scenarioDownAfter),
						"failover-timeout", strconv.Itoa(FailoverTimeout))).To(Equal("OK"))
				}
			}
			announce := func(ip string) {
				GinkgoHelper()
				for _, srv := range d.servers {
					Expect(dataDo(srv.Port, "CONFIG", "SET", "replica-announce-ip", ip)).To(Equal("OK"))
				}
				// The replicas announce themselves again when they reconnect.
				dataDo(d.Master.Port, "CLIENT", "KILL", "TYPE", "replica")
				want := "127.0.0.1"
				if ip != "" {
					want = ip
				}
				Eventually(func(g Gomega) {
					info, err := d.Info(d.Master.Port)
					g.Expect(err).NotTo(HaveOccurred())
					for _, r := range d.Replicas {
						g.Expect(info).To(MatchRegexp(`slave\d+:ip=%s,port=%d,state=online`, regexp.QuoteMeta(want), r.Port))
					}
				}).WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed())
			}
			hosts := func(s *Sentinel) func(g Gomega) []string {
				return func(g Gomega) []string {
					a, err := s.SC.GetMasterAddrByName(ctx, MasterName).Result()
					g.Expect(err).NotTo(HaveOccurred())
					out := []string{a[0]}
					reps, err := s.Replicas()
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(reps).To(HaveLen(len(d.Replicas)))
					for _, r := range reps {
						out = append(out, r["ip"])
					}
					return out
				}
			}

			announce("localhost")
			for _, s := range all {
				Expect(s.do("SENTINEL", "CONFIG", "SET", "resolve-hostnames", "yes")).To(Equal("OK"))
				Expect(s.do("SENTINEL", "CONFIG", "SET", "announce-hostnames", "yes")).To(Equal("OK"))
			}
			remonitor("localhost")
			for _, s := range all {
				Eventually(hosts(s)).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(HaveEach("localhost"), s.Name())
			}
			for _, s := range all {
				Expect(s.do("SENTINEL", "CONFIG", "SET", "announce-hostnames", "no")).To(Equal("OK"))
			}
			for _, s := range all {
				Eventually(hosts(s)).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(
					HaveEach(BeElementOf("127.0.0.1", "::1")), s.Name())
			}

			By("back to addresses")
			announce("")
			for _, srv := range d.servers {
				Expect(dataDo(srv.Port, "CONFIG", "REWRITE")).To(Equal("OK"))
			}
			for _, s := range all {
				Expect(s.do("SENTINEL", "CONFIG", "SET", "resolve-hostnames", "no")).To(Equal("OK"))
			}
			remonitor("127.0.0.1")
			d.settle()
		})

		// 09-acl-support.tcl

		It("authenticates to the other sentinels with sentinel-user and sentinel-pass (09-acl-support)", func() {
			d.settle()
			saved := map[*Sentinel][2]any{}
			for _, s := range all {
				saved[s] = [2]any{s.C, s.SC}
			}
			DeferCleanup(func() {
				for _, s := range all {
					s.C, s.SC = saved[s][0].(*redis.Client), saved[s][1].(*redis.SentinelClient)
				}
			})
			By("a user on every sentinel and the default user off")
			for _, s := range all {
				Expect(s.do("ACL", "SETUSER", "testuser", ">secret", "+@all", "on")).To(Equal("OK"))
				Expect(s.do("ACL", "SETUSER", "default", "off")).To(Equal("OK"))
				_ = s.C.Do(ctx, "CLIENT", "KILL", "USER", "default", "SKIPME", "no").Err()
				opts := &redis.Options{Addr: s.Addr(), Username: "testuser", Password: "secret", MaxRetries: -1,
					DialTimeout: 2 * time.Second, ReadTimeout: 3 * time.Second, PoolSize: 2}
				s.C = redis.NewClient(opts)
				s.SC = redis.NewSentinelClient(opts)
				d.clients = append(d.clients, s.C)
				DeferCleanup(s.SC.Close)
				Expect(s.do("ACL", "WHOAMI")).To(Equal("testuser"))
			}

			By("the sentinels cannot reach each other: no quorum")
			Eventually(func() error { return all[1].C.Do(ctx, "SENTINEL", "CKQUORUM", MasterName).Err() }).
				WithTimeout(DiscoveryWait).WithPolling(Poll).Should(MatchError(ContainSubstring("NOQUORUM")))

			By("SENTINEL CONFIG SET sentinel-user and sentinel-pass")
			for _, s := range all {
				Expect(s.do("SENTINEL", "CONFIG", "SET", "sentinel-user", "testuser")).To(Equal("OK"))
				Expect(s.do("SENTINEL", "CONFIG", "SET", "sentinel-pass", "secret")).To(Equal("OK"))
			}
			Eventually(func() (any, error) { return all[1].C.Do(ctx, "SENTINEL", "CKQUORUM", MasterName).Result() }).
				WithTimeout(DiscoveryWait).WithPolling(Poll).Should(HavePrefix("OK "))

			By("the default user on again")
			for _, s := range all {
				Expect(s.do("ACL", "SETUSER", "default", "on")).To(Equal("OK"))
				Expect(s.do("SENTINEL", "CONFIG", "SET", "sentinel-user", "")).To(Equal("OK"))
				Expect(s.do("SENTINEL", "CONFIG", "SET", "sentinel-pass", "")).To(Equal("OK"))
				// (DELUSER also closes this connection, after the reply.)
				Expect(s.do("ACL", "DELUSER", "testuser")).To(Equal(int64(1)))
			}
			for _, s := range all {
				s.C, s.SC = saved[s][0].(*redis.Client), saved[s][1].(*redis.SentinelClient)
				d.drain(s.C)
				d.drain(s.SC)
			}
			d.settle()
			for _, s := range all {
				Eventually(func() (any, error) { return s.C.Do(ctx, "SENTINEL", "CKQUORUM", MasterName).Result() }).
					WithTimeout(DiscoveryWait).WithPolling(Poll).Should(HavePrefix("OK 5 usable"), s.Name())
			}
		})

		// 10-replica-priority.tcl

		It("hides replica-announced no replicas and never promotes replica-priority 0 (10-replica-priority)", func() {
			d.settle()
			r0 := d.Replicas[0].Port
			Expect(dataDo(r0, "CONFIG", "SET", "replica-announced", "no")).To(Equal("OK"))
			Expect(dataDo(r0, "CONFIG", "SET", "replica-announced", "yes")).To(Equal("OK"))
			for _, bad := range []string{"321", "a3b2c1"} {
				Expect(d.Data(r0).Do(ctx, "CONFIG", "SET", "replica-announced", bad).Err()).To(HaveOccurred())
			}
			listed := func(n int) {
				GinkgoHelper()
				for _, s := range all {
					Eventually(func() ([]map[string]string, error) { return s.Replicas() }).WithTimeout(DiscoveryWait).WithPolling(Poll).
						Should(HaveLen(n), s.Name())
				}
			}
			listed(4)
			hidden := d.Replicas[:2]
			for _, r := range hidden {
				Expect(dataDo(r.Port, "CONFIG", "SET", "replica-announced", "no")).To(Equal("OK"))
			}
			listed(2)
			for _, s := range all {
				reps, err := s.Replicas()
				Expect(err).NotTo(HaveOccurred())
				Expect(PortsOf(reps)).To(Equal(Strs(d.Replicas[2].Port, d.Replicas[3].Port)))
			}
			for _, r := range hidden {
				Expect(dataDo(r.Port, "CONFIG", "SET", "replica-announced", "yes")).To(Equal("OK"))
			}
			listed(4)

			priorities := func(want map[int]string) {
				GinkgoHelper()
				for port, p := range want {
					Expect(dataDo(port, "CONFIG", "SET", "replica-priority", p)).To(Equal("OK"))
				}
				for _, s := range all {
					Eventually(func(g Gomega) {
						reps, err := s.Replicas()
						g.Expect(err).NotTo(HaveOccurred())
						for _, r := range reps {
							port, _ := strconv.Atoi(r["port"])
							g.Expect(r).To(HaveKeyWithValue("slave-priority", want[port]), s.Name())
						}
					}).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Succeed())
				}
			}
			By("every replica with priority 0: no replica to promote")
			zero := map[int]string{}
			for _, r := range d.Replicas {
				zero[r.Port] = "0"
			}
			priorities(zero)
			Expect(all[0].C.Do(ctx, "SENTINEL", "FAILOVER", MasterName).Err()).To(MatchError("NOGOODSLAVE No suitable replica to promote"))

			By("one replica with priority 10, the others 0: it is promoted")
			target := d.Replicas[2]
			zero[target.Port] = "10"
			priorities(zero)
			old := d.Master
			Expect(all[0].do("SENTINEL", "FAILOVER", MasterName)).To(Equal("OK"))
			Expect(d.waitSwitch(old.Port, all)).To(Equal(target.Port))
			d.promote(target.Port)
			for _, srv := range d.servers {
				Expect(dataDo(srv.Port, "CONFIG", "SET", "replica-priority", "100")).To(Equal("OK"))
			}
			d.settle()
		})

		// 11-port-0.tcl

		It("keeps one entry per sentinel address when a sentinel restarts with a new run id (11-port-0)", func() {
			d.settle()
			s := all[4]
			oldID := s.MyID()
			s.Kill()
			conf, err := os.ReadFile(s.ConfPath)
			Expect(err).NotTo(HaveOccurred())
			var kept []string
			for _, line := range strings.SplitAfter(string(conf), "\n") {
				if !strings.Contains(line, "myid") {
					kept = append(kept, line)
				}
			}
			Expect(os.WriteFile(s.ConfPath, []byte(strings.Join(kept, "")), 0o644)).To(Succeed())
			d.restartSentinel(s)
			newID := s.MyID()
			Expect(newID).NotTo(Equal(oldID))
			for _, o := range all[:4] {
				Eventually(func(g Gomega) {
					others, err := o.Others()
					g.Expect(err).NotTo(HaveOccurred())
					var ids []string
					for _, e := range others {
						if e["port"] == strconv.Itoa(s.Port) {
							ids = append(ids, e["runid"])
						}
					}
					g.Expect(ids).To(Equal([]string{newID}))
					m, err := o.master()
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(m).To(HaveKeyWithValue("num-other-sentinels", "4"))
				}).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Succeed(), o.Name())
			}

			By("announce-port: the others follow the sentinel to the announced port, and back")
			portOf := func(o *Sentinel) func(g Gomega) []string {
				return func(g Gomega) []string {
					others, err := o.Others()
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(others).To(HaveLen(4))
					var ports []string
					for _, e := range others {
						if e["runid"] == newID {
							ports = append(ports, e["port"])
						}
					}
					return ports
				}
			}
			announced := integration.FreePort()
			Expect(s.do("SENTINEL", "CONFIG", "SET", "announce-port", strconv.Itoa(announced))).To(Equal("OK"))
			Expect(pairs(s.do("SENTINEL", "CONFIG", "GET", "announce-port"))).To(Equal(map[string]string{"announce-port": strconv.Itoa(announced)}))
			for _, o := range all[:4] {
				Eventually(portOf(o)).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Equal([]string{strconv.Itoa(announced)}), o.Name())
			}
			Expect(s.do("SENTINEL", "CONFIG", "SET", "announce-port", "0")).To(Equal("OK"))
			for _, o := range all[:4] {
				Eventually(portOf(o)).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Equal([]string{strconv.Itoa(s.Port)}), o.Name())
			}
		})

		// 12-master-reboot.tcl

		It("fails over when the master reboots and stays LOADING past master-reboot-down-after-period (12-master-reboot)", func() {
			d.settle()
			old := d.Master
			Expect(dataDo(old.Port, "EVAL", "for i=1,ARGV[1] do redis.call('set','k'..i,i) end return 1", "0", "5000")).To(Equal(int64(1)))
			Expect(dataDo(old.Port, "SAVE")).To(Equal("OK"))
			Expect(dataDo(old.Port, "CONFIG", "SET", "key-load-delay", "2000")).To(Equal("OK"))
			Expect(dataDo(old.Port, "CONFIG", "SET", "loading-process-events-interval-bytes", "1024")).To(Equal("OK"))
			Expect(dataDo(old.Port, "CONFIG", "REWRITE")).To(Equal("OK"))
			// A down-after far beyond the wait: only the reboot period can
			// make the master SDOWN here.
			setAll(all, "master-reboot-down-after-period", "2000", "down-after-milliseconds", "600000")
			ev := Watch(all...)
			old.Kill()
			d.restartData(old)
			newPort := d.waitSwitch(old.Port, all)
			Expect(ev.Publishers("+reboot", fmt.Sprintf(`^master %s 127\.0\.0\.1 %d$`, MasterName, old.Port))).NotTo(BeEmpty(), ev.String())
			d.promote(newPort)
			setAll(all, "master-reboot-down-after-period", "0", "down-after-milliseconds", strconv.Itoa(scenarioDownAfter))
			Eventually(func() error { return d.Data(old.Port).Do(ctx, "CONFIG", "SET", "key-load-delay", "0").Err() }).
				WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed())
			Eventually(func() error { return d.Data(old.Port).Do(ctx, "CONFIG", "REWRITE").Err() }).
				WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed())
			d.ExpectMaster(newPort)
			replicasFollow(ConvertWait)
		})

		// 13-info-command.tcl

		It("answers INFO with the sentinel's sections only (13-info-command)", func() {
			d.settle()
			s := all[0]
			info := func(args ...any) string {
				GinkgoHelper()
				v, err := s.C.Do(ctx, append([]any{"INFO"}, args...)...).Text()
				Expect(err).NotTo(HaveOccurred())
				return v
			}
			for _, args := range [][]any{{}, {"all"}, {"default"}, {"everything"}} {
				v := info(args...)
				for _, in := range []string{"redis_version", "maxclients", "used_cpu_user", "sentinel_tilt"} {
					Expect(v).To(ContainSubstring(in), "INFO %v", args)
				}
				for _, out := range []string{"used_memory", "rdb_last_bgsave", "master_repl_offset", "cluster_enabled"} {
					Expect(v).NotTo(ContainSubstring(out), "INFO %v", args)
				}
			}
			v := info("sentinel")
			Expect(v).To(ContainSubstring("sentinel_tilt"))
			for _, out := range []string{"used_memory", "rdb_last_bgsave", "used_cpu_user"} {
				Expect(v).NotTo(ContainSubstring(out))
			}
			v = info("server", "sentinel", "replication")
			Expect(v).To(ContainSubstring("redis_version"))
			Expect(v).To(ContainSubstring("sentinel_tilt"))
			for _, out := range []string{"used_memory", "rdb_last_bgsave", "used_cpu_user"} {
				Expect(v).NotTo(ContainSubstring(out))
			}
			v = info("cpu", "all")
			Expect(v).To(ContainSubstring("used_cpu_user"))
			Expect(v).To(ContainSubstring("sentinel_tilt"))
			for _, out := range []string{"used_memory", "master_repl_offset"} {
				Expect(v).NotTo(ContainSubstring(out))
			}
			Expect(v).To(MatchRegexp(`(?m)^master0:name=%s,status=ok,address=127\.0\.0\.1:%d,slaves=4,sentinels=5\r?$`,
				MasterName, d.Master.Port))
			sameShape(all)
		})
	})
}
