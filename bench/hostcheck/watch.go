package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queryd/queryd/a2s"
)

// watch runs one A2S_INFO client per server (skip excluded), each asking
// in a loop, and counts the queries not answered within 1 s.
func watch(base, n, skip int, duration, interval time.Duration) error {
	var queries, answered, lost atomic.Int64
	var mu sync.Mutex
	lostBy := map[int]int{}
	end := time.Now().Add(duration)
	var wg sync.WaitGroup
	servers := 0
	for i := range n {
		if i == skip {
			continue
		}
		servers++
		c, err := a2s.Dial(addr(base, i))
		if err != nil {
			return err
		}
		c.Timeout = time.Second
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			for time.Now().Before(end) {
				queries.Add(1)
				if _, err := c.Info(); err != nil {
					lost.Add(1)
					mu.Lock()
					lostBy[i]++
					mu.Unlock()
				} else {
					answered.Add(1)
				}
				time.Sleep(interval)
			}
		}()
	}
	wg.Wait()
	fmt.Printf("RESULT servers=%d queries=%d answered=%d lost=%d lost_by_server=%v\n",
		servers, queries.Load(), answered.Load(), lost.Load(), lostBy)
	return nil
}
