package sagl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/module"
)

// Name is the protocol's name, written once: its config table [sagl], the
// protocol label of its metrics and its `queryd query -proto` value.
const Name = "sagl"

// Module is the SAGL protocol module: its [sagl] section, its handler with
// the logo loader, its HTTP service, and its client for `queryd query`.
type Module struct{}

// Name returns Name.
func (Module) Name() string { return Name }

// Claims reports whether a datagram is one of the protocol's queries, with
// the protocol on or off (the daemon's Claimer capability: a query never
// wakes a sleeping server, [sleep]).
func (Module) Claims(p []byte) bool { return Claims(p) }

// NewSection returns [sagl] with its defaults.
func (Module) NewSection() config.Section { return NewSection() }

// Build makes the SAGL handler for [sagl] and reads the operator's logo (a
// non-blocking open of a regular file) so that the first reply carries it.
func (Module) Build(sec config.Section, env module.Env) (module.Protocol, error) {
	s := sec.(*Section)
	p := &Protocol{
		Handler: NewHandler(Config{Players: s.Players, MaxList: int(s.MaxList)}, env.Issuer),
		cfgLogo: s.Logo,
		srvLogo: serverLogo(env.Base),
		maxLogo: int64(s.MaxLogo),
		log:     env.Log,
	}
	if s.LogoDir != "" {
		// Opened once (and again on SIGHUP): renaming the path later
		// leads no feed-set logo out of the directory it named.
		root, err := OpenLogoDir(s.LogoDir)
		if err != nil {
			p.log.Warn("feed-set logos not served", "err", err)
		}
		p.logoDir = root
	}
	ref := logoRef{path: p.cfgLogo}
	if p.srvLogo != "" {
		ref.path = p.srvLogo
	}
	p.have, p.logo = ref, p.load(ref, nil)
	return p, nil
}

// Services returns the HTTP service when [sagl] is on and http is set.
func (Module) Services(sec config.Section, env module.Env, current func() module.Protocol) ([]module.Service, error) {
	s := sec.(*Section)
	if !s.Enabled || !s.HTTP.IsValid() {
		return nil, nil
	}
	h, err := newHTTPService(s, env, func() *Handler {
		if p, ok := current().(*Protocol); ok {
			return p.Handler
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []module.Service{h}, nil
}

// Probe is an info request with token 0. Its challenge says nothing about
// the query (token 0 always gets one), so it does not count as one: the
// client itself says when only challenges came (ErrOnlyChallenges).
func (Module) Probe() module.Probe {
	return module.Probe{
		Request:   AppendRequest(nil, Request{Kind: KindInfo}),
		Reply:     func(p []byte) bool { return len(p) >= 6 && bytes.HasPrefix(p, []byte("SAGR")) },
		Challenge: func([]byte) bool { return false },
	}
}

// Query asks addr for its SAGL JSON (and with opts.Logo saves the logo,
// checked against its SHA-256). The JSON is printed as the server sent it;
// the round trip goes to opts.Notes, like the spec's sagl-query. The
// client's timeout bounds its whole call: the context's deadline.
func (Module) Query(ctx context.Context, addr string, opts module.QueryOptions) (module.Answer, error) {
	start := time.Now()
	c, err := Dial(addr)
	if err != nil {
		return module.Answer{}, err
	}
	defer c.Close()
	whole := module.StepTimeout(ctx, module.QueryOptions{})
	c.Timeout = whole
	res, err := c.Info()
	if err != nil {
		return module.Answer{}, err
	}
	if opts.Notes != nil {
		fmt.Fprintf(opts.Notes, "sagl %s: round trip %.2f ms\n", addr, float64(res.RTT.Microseconds())/1000)
	}
	if opts.Logo != "" {
		c.Timeout = max(whole-time.Since(start), time.Millisecond)
		if err := saveLogo(c, opts); err != nil {
			return module.Answer{}, err
		}
	}
	sum := module.Summary{Name: res.Info.Name}
	if pl := res.Info.Players; pl != nil {
		sum.Players, sum.MaxPlayers = module.IntPtr(pl.Online), module.IntPtr(pl.Max)
	}
	return module.Answer{Summary: sum, Full: json.RawMessage(res.JSON)}, nil
}

// saveLogo fetches the logo and writes it to opts.Logo.
func saveLogo(c *Client, opts module.QueryOptions) error {
	lr, err := c.Logo()
	if err != nil {
		return fmt.Errorf("logo: %w", err)
	}
	if lr.Data == nil {
		return errors.New("logo: the server has no logo")
	}
	if err := os.WriteFile(opts.Logo, lr.Data, 0o644); err != nil {
		return fmt.Errorf("logo: %w", err)
	}
	if opts.Notes != nil {
		fmt.Fprintf(opts.Notes, "logo: %d bytes, sha256 %x, saved to %s\n", len(lr.Data), lr.Sum, opts.Logo)
	}
	return nil
}

var (
	_ module.Protocol = (*Protocol)(nil)
	_ io.Closer       = (*Protocol)(nil)
)
