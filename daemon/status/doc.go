// Package status is queryd's live status page for operators, served on the
// admin listener ([admin] listen, loopback by default): GET / is one
// self-contained page (HTML, CSS and a little JavaScript embedded in the
// binary; no CDN, no build step), which reads GET /status.json once a
// second and renders it. docs/status.md documents the JSON.
//
// The page only reads: it has no actions and changes nothing. Everything it
// shows that comes from outside (player and server names, source addresses)
// is set as text (textContent), never as HTML, and the page is served with
// a Content-Security-Policy that allows no script but its own file, no
// connection but to the admin address, and with X-Content-Type-Options:
// nosniff (Headers; the daemon sets them on every admin response). The
// daemon's admin listener refuses requests whose Host is a name other than
// localhost or an [admin] allowed_hosts name, on every route, so that a
// web page cannot read the JSON or the metrics through DNS rebinding while
// an operator has an SSH tunnel open.
//
// /status.json is encoded once per sample (Sampler.JSON) and those bytes
// are served to every request until the next: readers cost a write each.
// The silence banner and the "silent" object read the daemon's one silence
// value (Source.Silence), the upstream card the poller's status
// (Source.Upstream). The browser tests are in the interop module
// (interop/page_test.go), so that chromedp is no dependency of queryd's.
//
// The Sampler reads the counters the daemon already keeps (its Prometheus
// registry: the responder's queryd_requests_total and bytes, the relay's,
// and the master heartbeats' metrics that a module names, Source.Heartbeats,
// so that the page names no protocol) once a second into fixed-size rings
// (Samples seconds), plus the busiest sources that the responder's receive
// loops count (responder.Server.DrainSources) and the XDP fast path counts
// in the driver (xdp.FastPath.DrainSources), kept for the last minute in
// a fixed-size ring of per-second top lists. It runs as one of the
// daemon's parts (Serve(ctx)), or, on a host of several servers, the
// daemon's one tick calls Sample for each server's sampler (RegisterHost
// serves them by name: /status.json?server=NAME, /servers.json). The
// document is encoded on the first request after a sample.
package status
