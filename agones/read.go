package agones

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// watchLoop keeps the watch stream open: opened again after it ends,
// after a back-off that starts over once a stream has stayed open for
// maxBackoff (a stream that ends at once, every time, is asked ever less
// often).
func (w *Watcher) watchLoop(ctx context.Context) {
	var bo backoff
	for {
		opened := time.Now()
		w.watchOnce(ctx)
		if time.Since(opened) >= maxBackoff {
			bo.reset()
		}
		if !sleep(ctx, bo.next()) {
			return
		}
		w.m.reconnects.Inc()
	}
}

// watchOnce reads one watch stream until it ends.
func (w *Watcher) watchOnce(parent context.Context) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	resp, err := w.get(ctx, w.watchURL)
	if err != nil {
		if parent.Err() == nil {
			w.failed(SourceWatch, fmt.Errorf("opening the watch stream: %w", err))
		}
		return
	}
	defer resp.Body.Close()
	w.watching.Store(true)
	defer w.watching.Store(false)
	timer := time.AfterFunc(time.Hour, func() { cancel(errLineTimeout) })
	timer.Stop()
	defer timer.Stop()
	lr := newLineReader(resp.Body, MaxLine, func(waiting bool) {
		if waiting {
			timer.Reset(w.timeout)
		} else {
			timer.Stop()
		}
	})
	for {
		line, err := lr.next()
		switch {
		case errors.Is(err, errTooLong):
			w.refused(SourceWatch, refuse(ReasonTooLong, "a line longer than %d bytes: skipped", MaxLine))
			continue
		case err != nil:
			w.ended(parent, ctx, err)
			return
		}
		if gs, err := parseWatchLine(line); err != nil {
			w.refused(SourceWatch, err)
		} else {
			w.apply(SourceWatch, gs, 0)
		}
	}
}

// ended records why a watch stream ended (nothing when queryd stops).
func (w *Watcher) ended(parent, ctx context.Context, err error) {
	switch {
	case parent.Err() != nil:
	case errors.Is(context.Cause(ctx), errLineTimeout):
		w.refused(SourceWatch, refuse(ReasonTimeout, "a line not ended within %s: opening the stream again", w.timeout))
	default:
		if err == io.EOF {
			err = errors.New("the SDK server ended it")
		}
		w.failed(SourceWatch, fmt.Errorf("the watch stream ended: %w", err))
	}
}

// pollLoop asks GET /gameserver every interval.
func (w *Watcher) pollLoop(ctx context.Context) {
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			w.poll(ctx)
		}
	}
}

// poll asks GET /gameserver once and applies the answer, unless a watch
// line came while it was on its way (the answer may be the older).
func (w *Watcher) poll(parent context.Context) {
	w.mu.Lock()
	seq := w.seq
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(parent, w.timeout)
	defer cancel()
	gs, err := w.getGameServer(ctx)
	switch {
	case parent.Err() != nil:
	case err != nil:
		var r *refusal
		if errors.As(err, &r) {
			w.refused(SourceGet, r)
		} else {
			w.failed(SourceGet, fmt.Errorf("GET /gameserver: %w", err))
		}
	default:
		w.apply(SourceGet, gs, seq)
	}
}

// getGameServer reads GET /gameserver's answer, at most MaxLine bytes of it.
func (w *Watcher) getGameServer(ctx context.Context) (*gameServer, error) {
	resp, err := w.get(ctx, w.getURL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxLine+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxLine {
		return nil, refuse(ReasonTooLong, "an answer longer than %d bytes", MaxLine)
	}
	return parseGameServer(body)
}

// get sends a GET and returns a 200 answer; any other status is an error
// carrying the start of its body.
func (w *Watcher) get(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %s: %q", resp.Status, b)
	}
	return resp, nil
}

// sleep waits d or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
