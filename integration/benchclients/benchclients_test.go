package benchclients

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration/benchutil"
	"github.com/vigil-kv/vigil/internal/resp"
)

type scenario struct {
	name  string
	conns int
	// batch is what each connection sends once; replies is how many
	// replies it reads back.
	batch   []byte
	replies int
	// setup runs on the server's go-redis client before the connections.
	setup func(t *testing.T, s *benchutil.Server)
}

func scenarios() []scenario {
	big := benchutil.EnvInt("VIGIL_BENCH_BIG", 1000)
	val := strings.Repeat("v", 16<<10)
	var sets, gets []byte
	for i := range 16 {
		sets = resp.AppendCommandStrings(sets, "SET", "w:"+strconv.Itoa(i), val)
		gets = resp.AppendCommandStrings(gets, "GET", "r:"+strconv.Itoa(i))
	}
	return []scenario{
		{name: "idle", conns: benchutil.EnvInt("VIGIL_BENCH_CONNS", 5000), batch: resp.AppendCommandStrings(nil, "PING"), replies: 1},
		{name: "set16k", conns: big, batch: sets, replies: 16},
		{name: "get16k", conns: big, batch: gets, replies: 16, setup: func(t *testing.T, s *benchutil.Server) {
			for i := range 16 {
				if err := s.Client.Set(t.Context(), "r:"+strconv.Itoa(i), val, 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
}

// connect opens n connections to addr, each sending batch and reading its
// replies before the next opens, and returns them open.
func connect(t *testing.T, addr string, n int, batch []byte, replies int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", len(conns), err)
		}
		conns = append(conns, c)
		if _, err := c.Write(batch); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		br := bufio.NewReaderSize(c, 64<<10)
		for range replies {
			if _, err := resp.ReadValue(br, resp.DefaultReplyLimits); err != nil {
				t.Fatalf("reply: %v", err)
			}
		}
		if br.Buffered() > 0 {
			t.Fatal("more replies than commands")
		}
	}
	return conns
}

func TestBenchClients(t *testing.T) {
	benchutil.SkipUnlessEnabled(t, "just bench-clients", "the per-connection memory benchmark")
	settle := time.Duration(benchutil.EnvInt("VIGIL_BENCH_SETTLE", 20)) * time.Second
	bins := benchutil.Binaries(t)
	if p := os.Getenv("VIGIL_SERVER_BIN"); p != "" {
		bins[0].Path = p
	}
	fmt.Printf("%-8s %-6s %6s %10s %10s %12s\n", "scenario", "server", "conns", "rss0 KB", "rss KB", "KB/conn")
	for _, sc := range scenarios() {
		perConn := map[string]float64{}
		total := map[string]int64{}
		for _, b := range bins {
			t.Run(sc.name+"/"+b.Name, func(t *testing.T) {
				s := benchutil.Start(t, b.Name, b.Path, redis.Options{}, "--maxclients", strconv.Itoa(sc.conns+100))
				if sc.setup != nil {
					sc.setup(t, s)
				}
				s.Client.Close() // its connection is not one of the measured
				// RSS is read a fixed time after start and after the
				// connections, the same for both servers: what a user
				// reading it then sees (no state is waited for).
				time.Sleep(settle)
				rss0 := s.RSSKB()
				conns := connect(t, s.Addr(), sc.conns, sc.batch, sc.replies)
				time.Sleep(settle)
				rss := s.RSSKB()
				perConn[b.Name] = float64(rss-rss0) / float64(len(conns))
				total[b.Name] = rss
				fmt.Printf("%-8s %-6s %6d %10d %10d %12.2f\n", sc.name, b.Name, len(conns), rss0, rss, perConn[b.Name])
				for _, c := range conns {
					c.Close()
				}
			})
		}
		if r, ok := perConn["redis"]; ok && r > 0 {
			fmt.Printf("%-8s vigil/redis: growth per connection %.2fx, RSS %.2fx\n", sc.name, perConn["vigil"]/r,
				float64(total["vigil"])/float64(total["redis"]))
		}
	}
}
