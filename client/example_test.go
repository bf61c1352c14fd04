package client_test

import (
	"context"
	"fmt"
	"time"

	"github.com/vigil-kv/vigil/client"
	"github.com/vigil-kv/vigil/client/lock"
)

// A client of the master "mymaster" watched by three sentinels, reading from
// replicas, with a lock that must reach one replica before it counts.
func Example() {
	c, err := client.New(client.Options{
		MasterName:    "mymaster",
		SentinelAddrs: []string{"127.0.0.1:26379", "127.0.0.1:26380", "127.0.0.1:26381"},
		ReadFrom:      client.Replica,
		OnMasterChange: func(oldAddr, newAddr, source string) {
			fmt.Printf("master moved from %s to %s (%s)\n", oldAddr, newAddr, source)
		},
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Set(ctx, "greeting", "hello", 0).Err(); err != nil {
		fmt.Println("write failed:", err) // not retried: RetryWrites is off
		return
	}
	v, err := c.Get(ctx, "greeting").Result() // a replica; retried on failover
	fmt.Println(v, err)

	locks := lock.New(c, lock.WithTTL(10*time.Second), lock.WithReplicas(1, time.Second))
	l, err := locks.Acquire(ctx, "report-job")
	if err != nil {
		fmt.Println("no lock:", err)
		return
	}
	defer l.Release(context.Background())
	// Pass l.Fence to the storage the job writes to, so it can refuse a
	// holder that was paused past its TTL; stop when l.Done() is closed.
	fmt.Println("fence", l.Fence)
}
