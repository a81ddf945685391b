// queryd status page: reads /status.json once a second and renders it; on
// a host of several servers, GET / lists them (/servers.json) and
// /?server=NAME is one server's page (/status.json?server=NAME).
// Everything from the JSON is set with textContent or as SVG numbers, never
// as HTML: names such as <script> show as the text they are.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const SHOWN = ["answered", "challenged", "rate_limited", "malformed", "ignored"];
const LABELS = {
  answered: "answered", challenged: "challenged", rate_limited: "rate-limited",
  malformed: "malformed", ignored: "ignored", unknown: "unclaimed", stale: "stale",
  forwarded: "forwarded", panic: "panic", denied: "denied", relay_dropped: "dropped by the relay", host_rate_limited: "rate-limited (host)", unproven_shed: "shed (unproven)", opened: "opened", evicted: "evicted",
  upstream: "to game server", downstream: "to clients",
};

const $ = (id) => document.getElementById(id);

// el makes an element with a class and a text (both optional).
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function setText(id, text) {
  $(id).textContent = text === undefined || text === null ? "" : String(text);
}

function fmtNum(x) {
  if (x === undefined || x === null || !isFinite(x)) return "–";
  const a = Math.abs(x);
  if (a >= 1e9) return (x / 1e9).toFixed(1) + "G";
  if (a >= 1e6) return (x / 1e6).toFixed(1) + "M";
  if (a >= 1e4) return (x / 1e3).toFixed(1) + "k";
  if (a >= 100 || Number.isInteger(x)) return String(Math.round(x));
  return x.toFixed(1);
}

function fmtBytes(x) {
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (x >= 1024 && i < units.length - 1) { x /= 1024; i++; }
  return (i === 0 ? String(Math.round(x)) : x.toFixed(1)) + " " + units[i];
}

function fmtDuration(s) {
  s = Math.max(0, Math.round(s));
  if (s < 60) return s + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + ":" + String(s % 60).padStart(2, "0");
  return Math.floor(m / 60) + " h " + String(m % 60).padStart(2, "0") + " min";
}

function fmtTime(iso) {
  return new Date(iso).toLocaleTimeString();
}

function ago(iso, now) {
  if (!iso) return "never";
  return fmtDuration((new Date(now) - new Date(iso)) / 1000) + " ago (" + fmtTime(iso) + ")";
}

function last(xs) {
  return xs && xs.length ? xs[xs.length - 1] : 0;
}

// spark draws a series as an SVG sparkline with its latest value beside it.
function spark(values, series, fmt) {
  const w = 120, h = 26;
  const cell = el("div", "spark-cell");
  cell.dataset.series = series;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 " + w + " " + h);
  svg.setAttribute("width", w);
  svg.setAttribute("height", h);
  svg.setAttribute("class", "spark s-" + series);
  const vs = values || [];
  const max = Math.max(1, ...vs);
  svg.dataset.last = String(last(vs));
  svg.dataset.max = String(max);
  if (vs.length > 1) {
    const step = w / (vs.length - 1);
    const pts = vs.map((v, i) => (i * step).toFixed(1) + "," + (h - 1 - (v / max) * (h - 2)).toFixed(1));
    const area = document.createElementNS(SVG, "polygon");
    area.setAttribute("points", "0," + h + " " + pts.join(" ") + " " + w + "," + h);
    area.setAttribute("class", "area");
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute("points", pts.join(" "));
    line.setAttribute("class", "line");
    svg.append(area, line);
  }
  cell.append(svg, el("span", "spark-value", (fmt || fmtNum)(last(vs))));
  return cell;
}

function renderServer(r) {
  const s = r.server;
  setText("server-name", s.name);
  document.title = "queryd: " + s.name;
  setText("server-map", s.map);
  setText("server-game", s.game || "–");
  setText("server-players", s.players + " / " + s.max_players + (s.bots ? " (" + s.bots + " bots)" : ""));
  setText("server-version", s.version || "–");
  setText("server-protocols", s.protocols.length ? s.protocols.join(", ") : "none");
  setText("server-listen", s.listen.join(", "));
  const b = s.build;
  setText("server-build", [b.version, b.go, b.revision ? b.revision.slice(0, 12) + (b.modified ? "+dirty" : "") : ""].filter(Boolean).join(" · "));
  const body = $("players").tBodies[0];
  const rows = s.player_list.map((p) => {
    const tr = el("tr");
    tr.dataset.id = String(p.id);
    tr.append(el("td", "name" + (p.bot ? " bot" : ""), p.name), el("td", "num", p.score),
      el("td", "num", p.ping < 0 ? "?" : p.ping), el("td", "num", fmtDuration(p.time)));
    return tr;
  });
  body.replaceChildren(...rows);
  $("players").hidden = rows.length === 0;
  $("players-empty").hidden = rows.length !== 0;
}

// silentWhy says why queryd is silent, for one cause of silent.reasons.
function silentWhy(reason, r) {
  const u = r.upstream;
  const server = u ? "the game server (" + u.protocol + " " + u.address + ")" : "the game server";
  switch (reason) {
    case "feed":
      return "the feed has sent nothing for " + fmtDuration(r.feed.last_message_age_s) +
        " (stale_after " + fmtDuration(r.feed.stale_after_s) + ")";
    case "upstream":
      return server + " has not answered for " + fmtDuration(u ? u.answer_age_s : 0) +
        " (stale_after " + fmtDuration(u ? u.stale_after_s : 0) + ")" + (u && u.last_error ? ": " + u.last_error : "");
    case "upstream_unanswered":
      return server + " has not answered since queryd started" + (u && u.last_error ? ": " + u.last_error : "");
  }
  return agonesWhy(reason, r) || reason;
}

// agonesWhy says why queryd is silent for an [agones] cause ("" for
// another cause).
function agonesWhy(reason, r) {
  const a = r.agones;
  const sdk = "the Agones SDK server" + (a ? " (" + a.sdk + ")" : "");
  const err = a && a.last_error ? ": " + a.last_error : "";
  switch (reason) {
    case "agones_starting":
      return a && a.state ? "the GameServer is " + a.state + ", not ready for players yet" :
        sdk + " has not been read since queryd started" + err;
    case "agones_stopped":
      return "the GameServer is " + (a && a.state ? a.state : "gone") + ": it takes no players";
    case "agones":
      return sdk + " has given no GameServer for " + fmtDuration(a ? a.read_age_s : 0) +
        " (stale_after " + fmtDuration(a ? a.stale_after_s : 0) + ")" + err;
  }
  return "";
}

function renderSilent(r) {
  const s = r.silent;
  const banner = $("silent-banner");
  document.body.dataset.silent = s.silent ? s.reason : "";
  if (!s.silent) {
    banner.hidden = true;
    banner.textContent = "";
    return;
  }
  banner.textContent = "Silent on every protocol since " + fmtTime(s.since) + ": " +
    s.reasons.map((x) => silentWhy(x, r)).join("; and ");
  banner.hidden = false;
}

// renderState shows what the server answers when it is not the game's
// state: a banner while not fed yet ([server] placeholders); silence has
// its own banner (renderSilent).
function renderState(r) {
  const st = r.state;
  document.body.dataset.state = st.state;
  const b = $("notfed-banner");
  b.hidden = st.state !== "not_fed";
  b.textContent = b.hidden ? "" : "Not fed yet: serving [server], the config's placeholders" +
    (st.since ? ", since " + fmtTime(st.since) : "") +
    ". No feeder has sent state" + (r.upstream ? " and the game server has not answered" : "") + ".";
}

// wakesText is "N (join a, feed b)" from a count by cause.
function wakesText(m) {
  const parts = Object.keys(m).sort().filter((k) => m[k]).map((k) => k + " " + m[k]);
  const n = Object.values(m).reduce((a, b) => a + b, 0);
  return n + (parts.length ? " (" + parts.join(", ") + ")" : "");
}

// renderSleep shows the [sleep] cycle: a banner while the game server
// sleeps (or is stopped or woken) and the sleep card.
function renderSleep(r) {
  const z = r.sleep;
  const b = $("asleep-banner");
  const asleep = r.state.state === "asleep";
  b.hidden = !asleep;
  b.textContent = !asleep ? "" : (z && z.phase === "waking" ? "Waking" : "Asleep") + " since " + fmtTime(r.state.since) +
    ": the game server is stopped while it has no players; every protocol answers its last state with 0 players, and a player's join wakes it." +
    (z ? " Wakes: " + wakesText(z.wakes) + "; failed: " + wakesText(z.failures) + "." : "");
  $("sleep").hidden = !z;
  if (!z) return;
  const what = { awake: "awake: players on", idle: "idle: no players", stopping: "stopping", asleep: "asleep: the game server is stopped", waking: "waking: start ran" };
  setText("sleep-phase", (what[z.phase] || z.phase) + " since " + fmtTime(z.phase_since) +
    (z.idle_until ? "; stopped at " + fmtTime(z.idle_until) + " unless a player comes (after " + fmtDuration(z.after_s) + ")" : ""));
  $("sleep-phase").className = z.phase === "awake" || z.phase === "idle" ? "good" : "warn";
  setText("sleep-since", z.asleep_since ? fmtTime(z.asleep_since) : "–");
  setText("sleep-wakes", wakesText(z.wakes) + "; " + z.wakes_last_hour + " in the last hour of " + z.wakes_per_hour + " allowed" +
    (z.refused ? "; " + z.refused + " refused" : ""));
  setText("sleep-failures", wakesText(z.failures));
  setText("sleep-last", z.last_wake ? fmtTime(z.last_wake) + (z.last_wake_took_s !== null ? ", took " + fmtDuration(z.last_wake_took_s) : "") : "never");
  const f = z.last_failure;
  setText("sleep-failure", f ? f.reason + " at " + fmtTime(f.at) + (f.error ? ": " + f.error : "") + (f.output ? "\n" + f.output : "") : "none");
  $("sleep-failure").className = f ? "bad" : "";
  setText("sleep-held", z.held + " datagrams, " + z.held_bytes + " bytes");
}

function renderAgones(r) {
  const a = r.agones;
  $("agones").hidden = !a;
  if (!a) return;
  const what = { unread: "not read yet", starting: "not ready yet", answering: "takes players", silent: "takes no players" };
  setText("agones-state", (a.state || "–") + ": " + (what[a.class] || a.class) + (a.stale ? " (queryd is silent)" : ""));
  $("agones-state").className = a.stale ? "bad" : "good";
  setText("agones-sdk", a.sdk + (a.watching ? " (watching)" : " (not watching)"));
  setText("agones-since", a.class_since ? fmtTime(a.class_since) : "–");
  setText("agones-last", a.last_read ? fmtDuration(a.read_age_s) + " ago (" + fmtTime(a.last_read) + ")" : "never");
  setText("agones-error", a.last_error ? "failed: " + a.last_error : "read");
}

// renderDown is the page of a server of the host that does not run.
function renderDown(r) {
  document.body.dataset.state = "down";
  document.querySelector("main").hidden = true;
  $("silent-banner").hidden = true;
  $("notfed-banner").hidden = true;
  $("asleep-banner").hidden = true;
  const b = $("down-banner");
  b.textContent = "Down: this server does not run, so it answers nothing: " + r.state.error;
  b.hidden = false;
  setText("server-name", chosen + " (down)");
  setText("updated", "updated " + fmtTime(r.now));
}

function renderUpstream(r) {
  const u = r.upstream;
  $("upstream").hidden = !u;
  if (!u) return;
  setText("upstream-state", u.stale ? (u.last_answer ? "not answering: queryd is silent" : "not answered yet: queryd is silent") :
    (u.partial ? "answering in part" : "answering"));
  $("upstream-state").className = u.stale ? "bad" : "good";
  setText("upstream-address", u.address);
  setText("upstream-protocol", u.protocol);
  setText("upstream-last", u.last_answer ? fmtDuration(u.answer_age_s) + " ago (" + fmtTime(u.last_answer) + ")" : "never");
  setText("upstream-rtt", u.round_trip_ms === null ? "–" : u.round_trip_ms.toFixed(1) + " ms");
  setText("upstream-error", u.last_error ? "failed: " + u.last_error : (u.partial ? "partial: " + u.partial : "answered"));
}

function renderFeed(r) {
  const f = r.feed;
  const notFed = r.state.state === "not_fed";
  setText("feed-state", f.stale ? "stale: answering nothing" :
    notFed ? "not fed yet: serving [server]" + (f.last_message ? " (pings only)" : "") :
      r.state.fed && f.last_message ? "live" : (r.upstream ? "no message yet (the game server's state is served)" :
        r.agones ? "no message yet (the GameServer's state is served)" : "no message yet"));
  $("feed-state").className = f.stale ? "bad" : notFed ? "warn" : "good";
  setText("feed-conns", f.connections);
  setText("feed-last", f.last_message ? fmtDuration(f.last_message_age_s) + " ago (" + fmtTime(f.last_message) + ")" : "never");
  setText("feed-version", f.state_version);
  setText("feed-stale-after", f.stale_after_s ? fmtDuration(f.stale_after_s) : "never stale");
  $("unproven").replaceChildren(spark(r.traffic.unproven_use.map((u) => u * 100), "unproven", (x) => Math.round(x) + " %"));
}

function renderTraffic(r) {
  const t = r.traffic;
  setText("traffic-span", fmtDuration(Math.max(0, t.times.length - 1) * t.interval_s));
  const head = [el("th", "", "Protocol"), ...SHOWN.map((o) => el("th", "", LABELS[o])),
    el("th", "num", "in"), el("th", "num", "out"), el("th", "", "other")];
  $("traffic-head").replaceChildren(...head);
  const rows = t.protocols.map((p) => {
    const tr = el("tr");
    tr.dataset.proto = p.name;
    tr.append(el("td", "proto", p.name === "unknown" ? "unclaimed" : p.name));
    for (const o of SHOWN) {
      const td = el("td");
      td.append(spark(p.per_s[o], o));
      tr.append(td);
    }
    tr.append(el("td", "num", fmtBytes(last(p.per_s.bytes_in)) + "/s"), el("td", "num", fmtBytes(last(p.per_s.bytes_out)) + "/s"));
    const other = t.outcomes.filter((o) => !SHOWN.includes(o) && p.totals[o] > 0)
      .map((o) => LABELS[o] + " " + fmtNum(last(p.per_s[o])) + "/s (" + fmtNum(p.totals[o]) + ")");
    tr.append(el("td", "small", other.join(", ")));
    return tr;
  });
  $("traffic-table").tBodies[0].replaceChildren(...rows);
}

function renderRelay(r) {
  $("relay").hidden = !r.relay;
  if (!r.relay) return;
  const rows = [["sessions", r.relay.sessions, null]].concat(
    ["opened", "evicted", "upstream", "downstream"].map((k) => [k, r.relay.per_s[k], r.relay.totals[k]]));
  $("relay-table").tBodies[0].replaceChildren(...rows.map(([k, vs, total]) => {
    const tr = el("tr");
    tr.dataset.series = k;
    const td = el("td");
    td.append(spark(vs, k));
    tr.append(el("th", "", k === "sessions" ? "open sessions" : (LABELS[k] || k) + (k === "upstream" || k === "downstream" ? " (packets/s)" : "/s")),
      td, el("td", "num small", total === null ? "" : fmtNum(total) + " total"));
    return tr;
  }));
}

function renderHeartbeats(r) {
  const h = r.heartbeats;
  $("heartbeats").hidden = !h;
  if (!h) return;
  setText("hb-last", ago(h.last_heartbeat, r.now));
  setText("hb-getinfo", ago(h.last_getinfo, r.now));
  setText("hb-sent", fmtNum(h.heartbeats) + " heartbeats, " + fmtNum(h.flatlines) + " flatlines");
  setText("hb-errors", fmtNum(h.errors));
}

function renderBusiest(r) {
  const b = r.busiest;
  setText("busiest-window", b.window_s);
  const rows = b.sources.map((s) => {
    const tr = el("tr");
    tr.dataset.source = s.source;
    const mix = el("td", "mix");
    mix.append(mixBar(s), el("span", "small", Object.entries(s.outcomes).map(([o, n]) => (LABELS[o] || o) + " " + fmtNum(n)).join(", ")));
    tr.append(el("td", "source", s.source), el("td", "num", fmtNum(s.requests)), mix);
    return tr;
  });
  $("busiest-table").tBodies[0].replaceChildren(...rows);
  $("busiest-table").hidden = rows.length === 0;
  $("busiest-empty").hidden = rows.length !== 0;
}

// mixBar draws a source's outcome mix as one stacked SVG bar.
function mixBar(s) {
  const w = 100, h = 10;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 " + w + " " + h);
  svg.setAttribute("width", w);
  svg.setAttribute("height", h);
  svg.setAttribute("class", "mixbar");
  const total = Object.values(s.outcomes).reduce((a, n) => a + n, 0) || 1;
  let x = 0;
  for (const [o, n] of Object.entries(s.outcomes)) {
    const rect = document.createElementNS(SVG, "rect");
    const rw = (n / total) * w;
    rect.setAttribute("x", x.toFixed(2));
    rect.setAttribute("width", rw.toFixed(2));
    rect.setAttribute("height", h);
    rect.setAttribute("class", "s-" + o);
    svg.append(rect);
    x += rw;
  }
  return svg;
}

function render(r) {
  if (r.state.state === "down") {
    renderDown(r);
    return;
  }
  $("down-banner").hidden = true;
  document.querySelector("main").hidden = false;
  renderSilent(r);
  renderState(r);
  renderServer(r);
  renderFeed(r);
  renderUpstream(r);
  renderAgones(r);
  renderSleep(r);
  renderTraffic(r);
  renderRelay(r);
  renderHeartbeats(r);
  renderBusiest(r);
  setText("updated", "updated " + fmtTime(r.now));
  document.body.dataset.version = String(r.feed.state_version);
}

// chosen is the server of ?server=NAME (null: the list on a host of
// several servers, else the one server's page).
const chosen = new URLSearchParams(location.search).get("server");
let listMode = false;

// renderServers renders /servers.json: one row per server, each opening
// that server's page.
function renderServers(l) {
  const tb = $("servers-table").querySelector("tbody");
  tb.replaceChildren();
  for (const s of l.servers) {
    const tr = el("tr");
    tr.dataset.server = s.name;
    const a = el("a", null, s.name);
    a.href = "/?server=" + encodeURIComponent(s.name);
    const name = el("td");
    name.append(a);
    const up = s.state === "running";
    const state = !up ? "down: " + s.error : s.silent ? "silent (" + s.reasons.join(", ") + ")" :
      s.asleep ? "asleep" : s.fed ? "answering" : "not fed yet: serving [server]";
    tr.append(name, el("td", !up || s.silent ? "bad state" : s.fed || s.asleep ? "good state" : "warn state", state),
      el("td", s.stale ? "bad feed" : "feed", up ? (s.stale ? "stale" : s.fed ? "live" : "not fed") : "–"),
      el("td", null, s.title), el("td", null, s.map),
      el("td", "num", up ? s.players + " / " + s.max_players : "–"),
      el("td", "num", fmtNum(s.requests_per_s)), el("td", "num", fmtNum(s.answered_per_s)),
      el("td", null, s.listen.join(" ")));
    tb.append(tr);
  }
  setText("server-name", l.servers.length + " servers");
  setText("updated", "updated " + fmtTime(l.now));
}

// showList switches the page to the server list (on) or one server's cards.
function showList(on) {
  $("servers").hidden = !on;
  document.querySelector("main").hidden = on;
  if (on) $("silent-banner").hidden = true;
  document.body.dataset.view = on ? "servers" : "server";
}

async function getJSON(url) {
  const res = await fetch(url, { cache: "no-store", credentials: "omit" });
  if (!res.ok) throw new Error("HTTP " + res.status);
  return res.json();
}

async function refresh() {
  const url = listMode ? "/servers.json" : "/status.json" + (chosen !== null ? "?server=" + encodeURIComponent(chosen) : "");
  try {
    const doc = await getJSON(url);
    if (listMode) renderServers(doc); else render(doc);
    $("error-banner").hidden = true;
  } catch (e) {
    const b = $("error-banner");
    b.textContent = "Cannot read " + url + " (" + e.message + "): showing the last state; retrying.";
    b.hidden = false;
  } finally {
    setTimeout(refresh, 1000);
  }
}

// start picks the view: one server's page with ?server=NAME or on a host
// of one server (the page as it always was), else the list.
async function start() {
  if (chosen !== null) {
    $("back").hidden = false;
  } else {
    try {
      const r = await getJSON("/status.json");
      listMode = r.servers > 1;
      if (!listMode) render(r);
    } catch (e) {
      listMode = false; // the one server's page; its errors show as usual
    }
  }
  showList(listMode);
  refresh();
}

start();
