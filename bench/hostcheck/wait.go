package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/gamespy4"
)

// parallel is how many servers are asked at once.
const parallel = 32

// wait asks servers first ... first+n-1 until each has answered A2S_INFO and GameSpy4 with
// its own name, and prints the time that took.
func wait(base, first, n int, prefix string, timeout time.Duration) error {
	start := time.Now()
	var pending atomic.Int64
	pending.Store(int64(n))
	idx := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	last := map[int]string{}
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				for time.Since(start) < timeout {
					why := answersAs(addr(base, i), serverName(prefix, i))
					if why == "" {
						break
					}
					mu.Lock()
					last[i] = why
					mu.Unlock()
					time.Sleep(20 * time.Millisecond)
				}
				if time.Since(start) < timeout {
					mu.Lock()
					delete(last, i)
					mu.Unlock()
					pending.Add(-1)
				}
			}
		}()
	}
	for i := range n {
		idx <- first + i
	}
	close(idx)
	wg.Wait()
	took := time.Since(start)
	if left := pending.Load(); left > 0 {
		for i, why := range last {
			return fmt.Errorf("%d of %d servers not answering after %s (server %d: %s)", left, n, timeout, i, why)
		}
		return fmt.Errorf("%d of %d servers not answering after %s", left, n, timeout)
	}
	fmt.Printf("RESULT servers=%d all_answering_s=%.3f\n", n, took.Seconds())
	return nil
}

// answersAs asks one server A2S_INFO and a GameSpy4 basic stat; "" when
// both name it want, else what was wrong.
func answersAs(address, want string) string {
	c, err := a2s.Dial(address)
	if err != nil {
		return err.Error()
	}
	c.Timeout = 300 * time.Millisecond
	info, err := c.Info()
	c.Close()
	if err != nil {
		return "a2s: " + err.Error()
	}
	if info.Name != want {
		return fmt.Sprintf("a2s name %q, want %q", info.Name, want)
	}
	g, err := gamespy4.Dial(address)
	if err != nil {
		return err.Error()
	}
	g.Timeout = 300 * time.Millisecond
	b, err := g.Basic()
	g.Close()
	if err != nil {
		return "gamespy4: " + err.Error()
	}
	if b.MOTD != want {
		return fmt.Sprintf("gamespy4 hostname %q, want %q", b.MOTD, want)
	}
	return ""
}
