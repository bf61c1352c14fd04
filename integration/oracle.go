package integration

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// OracleStep is one go-redis call as a spec saw it: the command line, the
// typed value(s) of the Cmder (what Val returns) and the error text.
type OracleStep struct {
	Cmd string
	Val []interface{}
	Err string
}

func (s OracleStep) String() string {
	return fmt.Sprintf("%s => %#v err=%q", s.Cmd, s.Val, s.Err)
}

// unorderedReplies are the commands whose array reply is in the order of a
// hash table (Redis's and Vigil's differ): their []string values are sorted
// before comparing.
var unorderedReplies = map[string]bool{
	"smembers": true, "sinter": true, "sunion": true, "sdiff": true,
	"hkeys": true, "hvals": true, "keys": true, "scan": true,
	"sscan": true,
}

// randomReplies are commands whose reply is random: only its size (and
// error) is compared.
var randomReplies = map[string]bool{
	"spop": true, "srandmember": true, "hrandfield": true, "zrandmember": true,
	"randomkey": true,
}

// stepRecorder is a go-redis hook that records every command the client
// processes (not the connection handshake).
type stepRecorder struct{ steps []OracleStep }

func (r *stepRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *stepRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (r *stepRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		st := recordStep(cmd)
		if ctx.Value(timeDependentKey{}) != nil {
			for i, v := range st.Val {
				st.Val[i] = fmt.Sprintf("a %T", v)
			}
		}
		r.steps = append(r.steps, st)
		return err
	}
}

type timeDependentKey struct{}

// TimeDependent marks the calls made with the returned context as having a
// reply that depends on the clock (a remaining TTL): only its type and
// error are compared; the script checks its range itself.
func TimeDependent(ctx context.Context) context.Context {
	return context.WithValue(ctx, timeDependentKey{}, true)
}

func recordStep(cmd redis.Cmder) OracleStep {
	var parts []string
	for _, a := range cmd.Args() {
		parts = append(parts, fmt.Sprint(a))
	}
	st := OracleStep{Cmd: strings.Join(parts, " ")}
	if err := cmd.Err(); err != nil {
		st.Err = err.Error()
	}
	name := cmd.Name()
	for _, v := range reflect.ValueOf(cmd).MethodByName("Val").Call(nil) {
		val := v.Interface()
		switch {
		case randomReplies[name] && v.Kind() == reflect.Slice:
			val = fmt.Sprintf("%d elements", v.Len())
		case randomReplies[name]:
			val = fmt.Sprintf("a %T", val)
		case unorderedReplies[name]:
			val = sortedCopy(val)
		}
		st.Val = append(st.Val, val)
	}
	return st
}

func sortedCopy(v interface{}) interface{} {
	switch s := v.(type) {
	case []string:
		c := append([]string(nil), s...)
		sort.Strings(c)
		return c
	case []interface{}:
		c := append([]interface{}(nil), s...)
		sort.Slice(c, func(i, j int) bool { return fmt.Sprint(c[i]) < fmt.Sprint(c[j]) })
		return c
	}
	return v
}

// OracleScript is a sequence of go-redis calls run against both servers.
type OracleScript func(ctx context.Context, c *redis.Client)

// RunOracleScript runs script with a fresh single-connection client of the
// given protocol on an emptied server (FLUSHALL, SCRIPT FLUSH) and returns
// every call it made with its typed result.
func RunOracleScript(addr string, proto int, script OracleScript) []OracleStep {
	GinkgoHelper()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{
		Addr:            addr,
		Protocol:        proto,
		DisableIdentity: true,
		MaxRetries:      -1,
		DialTimeout:     2 * time.Second,
		ReadTimeout:     5 * time.Second,
		WriteTimeout:    5 * time.Second,
		PoolSize:        1,
	})
	defer c.Close()
	Expect(c.FlushAll(ctx).Err()).To(Succeed())
	Expect(c.ScriptFlush(ctx).Err()).To(Succeed())
	rec := &stepRecorder{}
	c.AddHook(rec)
	script(ctx, c)
	return rec.steps
}

// ExpectSameSteps fails unless got (Vigil's) equals want (the oracle's) step
// by step.
func ExpectSameSteps(got, want []OracleStep, proto int) {
	GinkgoHelper()
	for i := 0; i < len(got) && i < len(want); i++ {
		Expect(got[i]).To(Equal(want[i]), "protocol %d, step %d: %s\nvigil:  %s\nredis:  %s",
			proto, i, want[i].Cmd, got[i], want[i])
	}
	Expect(len(got)).To(Equal(len(want)), "protocol %d: number of steps", proto)
	Expect(want).NotTo(BeEmpty())
}
