// Package xdp is queryd's optional XDP fast path (Linux): an eBPF program
// attached to the network interfaces named in [xdp] interfaces that answers
// the hot single-datagram queries in the driver, with the bytes, challenges
// and budgets of the socket path, and passes everything else to the socket
// path untouched.
//
// # What the program answers
//
// UDP to one of queryd's [listen] addresses (port and address, or any
// address of the family; an IPv6 socket is IPv6 only), IPv4 without options
// and not fragmented, IPv6 with UDP as the first next header:
//
//	A2S_INFO ("Source Engine Query\0") without a valid token  the 9-byte challenge (the INFO reply when [a2s] info_challenge is off)
//	A2S_INFO with a valid token                               the INFO reply
//	A2S_PLAYER / A2S_RULES with a valid token                 the reply, when it fits one datagram; else passed
//	A2S_PLAYER / A2S_RULES without a valid token              the 9-byte challenge
//	GameSpy4 handshake (FE FD 09)                             09 <session> <token in decimal> 00
//	GameSpy4 basic / full stat with a valid token             the stat reply behind the client's session id
//	Quake 3 getinfo / getstatus (any case; then nothing, \n or NUL)  infoResponse / statusResponse
//	SQP challenge (00 00 00 00 00, exactly 5 bytes)           00 <token, big-endian>
//	SQP query with a valid token (8 bytes, version 1)         the reply to its chunks byte, when it is one datagram, with the query's token
//	Bedrock unconnected ping (01 or 02, 33 bytes, the magic)  the pong with the ping's time
//	SAGL "SAGQ" (64 bytes, version 1, kind 1 or 2) without a valid token  the 12-byte challenge
//	SAGL info (kind 1) with a valid token                     the info reply, when the JSON is one part
//	anything else                                             XDP_PASS
//
// Passed to the socket path as they are: A2S compat ("SOURCE\0", the 'A'
// retry), A2A_PING and GETCHALLENGE, a GameSpy4 stat or an SQP query with a
// wrong or expired token (the socket path ignores and counts it), an SQP
// query with unknown chunk bits, a Bedrock ping with another id and a SAGL
// request of another shape (the socket path counts them malformed), a
// Quake 3 request with a challenge argument (the reply echoes it) or
// spelled otherwise than the command first (" getstatus", "\"getinfo\"",
// "/**/getinfo": the program's claim takes exactly what quake3.Claims
// takes, reading such a line as ioquake3 does in a bounded loop,
// bpf_loop, over a per-CPU copy of it; TestXDPQuake3ClaimsAsGo), SAGL
// logo pieces, relay traffic, replies of several datagrams or larger than
// the interface's MTU, and everything of a protocol that is off or while
// the program is not yet fed replies. The modules hand the program their
// replies (module.FastPath), with the bytes it fills in per request left
// zero: the challenges' tokens (SQP, SAGL; A2S's and GameSpy4's the
// program makes whole), GameSpy4's session, SQP's query token and
// Bedrock's time, which it copies from the request.
//
// # Only what the kernel would answer
//
// Before it answers, the program makes the kernel's checks (bpf/strict.h,
// bpf/route.h); a datagram to a listen address that fails one passes to
// the kernel, counted in queryd_xdp_passed_total{reason}, and the kernel
// decides exactly as without XDP:
//
//	malformed  IPv4 total length ≠ 20 + the UDP length, a wrong IPv4 header
//	           checksum; IPv6 version ≠ 6, payload length ≠ the UDP length,
//	           UDP checksum 0
//	not_local  destination MAC not the ingress interface's; destination
//	           address not one of that interface's (a routed guest's, a
//	           broadcast, a multicast address, 127.0.0.1 on the wire)
//	martian    multicast or broadcast source MAC; source IPv4 0/8, 127/8,
//	           224/4, 240/4, a subnet broadcast or one of our addresses;
//	           IPv6 ::, ::1, multicast, IPv4-mapped, link-local (the socket
//	           path decides whether it answers those)
//	vlan       the frame came with a VLAN tag the driver took off, or may
//	           have (below)
//	no_route   the route back to the source does not leave through the
//	           ingress interface (what rp_filter = 1 drops), or its
//	           neighbour is not resolved yet
//
// On a host that does not forward, the route back found for an IPv4
// source with a budget entry (from the mirrored main table) is remembered in it
// until the next netlink dump (at once on a change netlink announces, at
// least once a second), so a source that asks again skips that lookup;
// IPv6 sources, whose entries are per /64, are looked up every time.
//
// The interfaces' MACs, addresses (IPv4 subnet broadcasts included) and
// VLAN devices are kept in maps from netlink: a socket subscribed to link,
// address and route changes, and a dump on a change (at most one every
// 200 ms: a routing daemon's churn costs one dump in each) and every second
// (in case a notice was lost). Netlink rather than a bpf_fib_lookup of the
// destination: the lookup answers "not forwarded" alike for a local, a
// broadcast and a multicast destination, it answers nothing at all on an
// interface that does not forward, and the program needs the interface's
// MAC and VLAN devices anyway.
//
// The reply's next hop comes from the routing table: bpf_fib_lookup from
// the ingress interface, as rp_filter looks, which must name the ingress
// interface and give the neighbour's MAC (the reply's destination MAC; its
// source MAC is the interface's). bpf_fib_lookup works only on an
// interface that forwards (a hypervisor, a container host); elsewhere
// (BPF_FIB_LKUP_RET_FWD_DISABLED) the program looks the source up in the
// main table. The decision is per family and per ingress interface, as
// the kernel's (ip_forward for IPv4, net.ipv6.conf.IFACE.forwarding for
// IPv6): on a host that forwards IPv4 only (a Docker host) IPv4 sources
// take bpf_fib_lookup and IPv6 ones the mirror (TestXDPStrict's four
// cases). The main table is mirrored from netlink into an LPM trie
// (prefix → output interface, at most 65,536 routes; unreachable,
// blackhole and multipath routes pass), and the reply goes to the
// request's MAC. Policy routing rules are
// not consulted there.
//
// VLAN: in native mode each interface gets its own device-bound program
// (queryd_xdp_dev), which reads the tag the driver took off the frame
// (bpf_xdp_metadata_rx_vlan_tag, Linux 6.8; veth, mlx5, ice, ...) and
// passes tagged frames. Where the tag cannot be read (generic mode, an
// older kernel, a driver without the kfunc: the unbound queryd_xdp), an
// interface with VLAN devices on it passes every frame. A frame with its
// tag in band has another ethertype and passes too.
//
// The host firewall does not see what the program answers: XDP runs
// before netfilter, so nftables and iptables rules (a block list, a rate
// limit, closing the port) do not apply to it. [limits] deny is queryd's
// own block list: the program looks the source up in an LPM trie (IPv4 as
// ::ffff:a.b.c.d) before it answers anything and drops a match, counted
// as outcome "denied"; the socket path checks the same parsed list
// (responder.Deny); a SIGHUP rewrites the trie.
//
// The program does not verify the request's UDP checksum (a sender with
// checksum offload leaves only the pseudo-header sum in its frames).
//
// Replies leave with XDP_TX: Ethernet addresses from the route back, IP
// addresses and UDP ports swapped; IPv4 with TTL 64, DF, ID 0 and a correct header checksum; IPv6
// with hop limit 64; a full UDP checksum over IPv4 and IPv6 (a veth sender
// with checksum offload leaves only the pseudo-header sum in its frames, so
// the program never reuses the request's). The payload is byte for byte
// what the socket path sends for the same state and token (the tests
// compare every kind over IPv4 and IPv6). A frame is resized at its tail,
// or at its head where the driver left no tailroom (a veth running the
// program on the sender's skb); when neither works the query is passed
// (queryd_xdp_resize_failed_total).
//
// # Challenges, budgets, staleness
//
// Tokens are challenge.Issuer's: SipHash-2-4 of the source address (an
// IPv4-mapped IPv6 source is its IPv4 address) and the 30 s epoch, under the
// daemon's key, which the daemon writes into the config map with the offset
// between the wall clock and CLOCK_MONOTONIC: the program's epoch is user
// space's to within the 50 ms the offset is refreshed in plus one clock
// tick (the program reads bpf_ktime_get_coarse_ns, the last tick's
// CLOCK_MONOTONIC, which costs no clock source read; the deadlines and
// budgets it times are all far coarser than a tick), and only a step of
// the wall clock moves it. The current and the previous epoch are valid;
// the token is never 0 nor -1. An IPv4 source's token of the current
// epoch is kept in its budget entry (below), one 64-bit word with the
// epoch, so that a source asking again with its token costs no SipHash.
//
// The budgets are the responder's, with its defaults and semantics, kept in
// the program: the per-IP byte budget ([limits] per_ip_rate, per_ip_burst)
// in an LRU hash of [limits] tracked_ips sources keyed by IPv4 address or
// IPv6 /64, for every reply larger than its request (and [host]'s, the
// same way); the global unproven budget ([limits]
// unproven_rate, unproven_burst) for replies larger than their request to
// sources without a valid token (A2S_INFO with info_challenge off, Quake 3,
// the Bedrock pong),
// split among the CPUs as the responder splits it among its receive loops
// (each share's burst at least 1,500 bytes); Quake 3's and Bedrock's
// per-source packet rates ([quake3] and [bedrock] packet_rate,
// packet_burst) in an LRU hash each, before the reply. Each bucket is a GCRA (one 64-bit theoretical arrival time updated
// with compare-and-swap, so CPUs share it without a lock), which refuses
// exactly what a token bucket of the same rate and burst refuses. A refused
// reply is dropped and counted as rate_limited. The fast path's buckets are
// its own, apart from the socket path's: a source whose queries go partly
// through the program and partly through the socket path (A2S_INFO here, a
// split A2S_PLAYER there) draws on both. So the daemon gives each path half
// of [limits] while the program is attached, and the two together grant no
// more than [limits] (but for the bursts' floor of 1,500 bytes a path). The
// per-source packet rates are each protocol's own, and each path applies
// them apart.
//
// The proven-source tier (issue 43; responder's gate.go, the same rule):
// a source is proven once the program answered a valid token from it, for
// [limits] proven_for (mark_proven, in proven: an array of buckets of 4
// sources, each a keyed hash's fingerprint and an expiry, a quarter of
// tracked_ips buckets; one bucket read per lookup, no insert path). Every
// request that does not answer a valid token (a challenge asked, an open
// answer, Quake 3, Bedrock, a wrong token) first draws one request from
// the CPU's share of the server's unproven packet gate ([limits]
// unproven_packet_rate, unproven_packet_burst; unproven_gate, per CPU,
// split as the unproven budget is, after the daemon's half); only while
// that is spent is the proven table read, and a source not in it is
// dropped (XDP_DROP) before any reply work (no token computed, no route
// looked up, no reply built), counted unproven_shed in the seen table (no
// per-source insert). Each path keeps its own marks: the socket path
// learns a source from the answers it sends itself, and a request with a
// valid token is answered there whoever sends it (dgram.TokenChecker).
// Under bench/xdp.sh's 1 M-source IPv6 flood a dropped frame costs the
// program 216 ns (179-239) against 280 ns (255-325) for a challenge sent
// (medians of 3 alternating runs, a 2-core machine shared with other
// work); without the proven table's read 129-189 ns in two single runs,
// with it 164-172 in two more: the machine's noise spans most of the
// difference. A proven client asking 100 times a second got 96.8 % of its
// answers through that flood (79.6 % without the tier: the program's
// replies and the generator share the two cores); its frames skip the
// gate, so its losses are on the saturated veth pair, not in the program.
//
// In a host of several servers one address would still receive every
// server's per-IP budget; the host-wide per-IP budget ([host] per_ip_rate,
// per_ip_burst; responder.HostBudget on the socket path) caps what every
// server together sends it. The program draws on it too (Config.Host,
// SetHostLimits): a GCRA per source in an LRU hash (hostip), the same in
// every server's config, drawn on by every reply after the server's own
// per-IP budget allowed it; the daemon gives each path half of [host], as
// it does of [limits] (TestXDPHostBudget; hostile's
// TestXDPHostBudgetSplit).
//
// The verifier's work on the program is measured by TestXDPVerifierCost
// (its log's "processed N insns", against a ceiling there: 436,671 for
// the unbound program before the host-wide budget and the Quake 3 line
// reader, 451,841 with them, 387,117 with the proven-source tier); the
// deepest call chain (entry, handle, the
// Quake 3 line reader and its loop's callback) uses 496 of the 512 bytes
// of stack.
//
// Stale means silence here too: the daemon writes when queryd falls silent
// (Config.SilentFrom, from its one silence value: the feed's last message
// plus [feed] stale_after, or the [upstream] game server's last answer
// plus as much, or at once while it has not answered yet; on the
// monotonic clock); past it the program drops every query it would answer
// and counts it as stale. A feed message or an answer revives it within
// 50 ms.
//
// # Many servers, one program
//
// One program answers for every server of a host (Config.Servers, at most
// config.MaxServers, 256: MAX_SERVERS in bpf/consts.h sizes the
// per-server tables). The destination of each frame picks its server:
// package xdp expands the servers' listen addresses over the attached
// interfaces' local addresses (a wildcard listen: every address of its
// family on each interface; an exact one: its address, where the
// interface has it; an exact listen wins over another server's wildcard)
// into dests, a hash keyed by (ingress interface, destination address,
// port) whose value is the server's index with the interface's MAC and
// flags, and ports, an array of the ports some server listens on. So one
// lookup is the listen check, the "local address of this interface" check
// and the interface's; a frame to a port no server has costs one array
// read. Each server has its own config entry (its silence deadline, its
// budgets and packet rates), replies, deny prefixes, unproven budget,
// counters (exported on Server.Registry, which the daemon labels with the
// server's name) and per-source entries (the budgets and the busiest
// sources are keyed by server and source). The challenge issuer is the
// host's: a token is bound to the client's address, so a token one server
// issued is good at another of the same host. SetServers adds and removes
// servers by name on SIGHUP: a removed server's frames pass to the socket
// path at once (its destinations go, its config is disabled, its tables
// cleared). Divert (below) keeps its own table, keyed by the game
// server's address and port, whose entries carry the server's index.
//
// # Maps and updates
//
// config_map (by server: the key, the clock offset, the server's
// deadline, its budgets, the MTU, whether the deny and routes tries are in
// use), dests and ports (the servers' destinations, above), local_addrs
// (hash: the interfaces' addresses and broadcasts, which are never a
// source) and routes (LPM trie), kept from netlink, deny (LPM trie, every
// server's [limits] deny, keyed by server and prefix, at most 16,384 in
// all), replies (an array of maps holding one array per server
// of pre-encoded replies: the daemon builds a new array on every snapshot,
// and once a second for A2S_PLAYER's durations, and swaps it in whole, so a
// query never sees half an update; the program's A2S_PLAYER reply may lag
// the socket path's by up to one sync, 50 ms, after the second turns), perip
// and pktrate (LRU hashes; pktrate keyed by source and protocol row, for
// the protocols with a per-source packet rate), unproven and
// unproven_gate (per CPU), proven (the proven sources, above),
// stats_map (per-CPU counters, by server and protocol row), and the per-source counts of the status page's
// busiest sources (IPv4 address or IPv6 /64, by outcome). A reply no
// larger than its request (A2S's, SAGL's and SQP's challenges) gives a
// spoofed request nothing to reflect: the program sends it with no
// per-source state, no budget entry looked up or made (issue 43: under a
// spoofed flood from more sources than perip holds, every frame was an LRU
// insert, evicting), and counts it in seen_map, a slot per CPU and hash of
// the source (1,024 each, a later source of the slot's hash takes it over).
// An answer that amplifies, and a token to check, cost one per-source
// lookup: perip's entry (struct peer) holds the source's byte
// budget, its route back, its token and its counts, in two halves, one per
// drain period (drain_map): the program counts into half gen & 1, and the
// drain (once a second, at most every 250 ms, only when the program set
// drain_map's dirty flag) starts the next period and reads the ended half of
// every entry, which no CPU writes any more, and seen_map's slots of the
// ended period. A source dropped before any budget entry is looked up
// (stale, denied, over a packet rate) is counted in sources,
// an LRU hash of 4,096 sources of any server, which the drain empties.
// All go into each server's status page's busiest sources, beside the
// socket path's table. A reload ([limits], the
// protocol sections) re-publishes the maps without re-attaching; [xdp]
// itself and [limits] tracked_ips need a restart.
//
// # Metrics
//
// The program's answers are counted under the responder's names:
// queryd_requests_total{protocol,outcome} (answered, challenged,
// rate_limited, stale), queryd_received_bytes_total and
// queryd_sent_bytes_total. Its own: queryd_xdp_attached{interface,mode}
// (the host's), and per server (Server.Registry)
// queryd_xdp_requests_total{protocol,outcome} (its share of
// queryd_requests_total; protocol a2s, gamespy4, quake3, sqp, bedrock or
// sagl; outcome denied too), queryd_xdp_passed_total{reason} (datagrams
// to a listen address left to the socket path: other, not_local, martian,
// malformed, vlan, no_route), queryd_xdp_resize_failed_total,
// queryd_xdp_reply_updates_total.
//
// # Divert
//
// [listen] divert = ["ADDR:PORT"] names a stock game server's address
// that queryd does not bind: the game server keeps its port and sees its
// players' real addresses, and the program takes only the queries
// (queryd.c's divert hook, before the parse path). Per divert address queryd binds
// a port of the kernel's choosing on the same address (the hidden port,
// one of the listen table's), and the program's divert table (divert_map:
// address and port → hidden port, server index, the protocols it takes:
// those of Divert's takes that are on, config's [listen] divert_protocols,
// by default the [upstream] protocol) sends:
//
//	a whole request of a protocol it takes (its claim,     its destination port rewritten to the hidden port (the UDP
//	bpf/NAME.h: its shape, not its first bytes)            checksum fixed), then the parse path as for a listen address:
//	                                                        answered in the driver (the reply's source port put back to
//	                                                        the game port), dropped (stale, a budget, deny), or passed
//	                                                        to queryd's socket on the hidden port (a reply of several
//	                                                        datagrams, a Quake 3 challenge argument, A2S GETCHALLENGE)
//	anything else (game traffic, also when it starts like   XDP_PASS untouched: same source address and port, same
//	a query; Quake 3 getchallenge and connect, A2S 0x71;    bytes, to the game server
//	a protocol off or not taken)
//	a frame the kernel's checks refuse (strict.h)           XDP_PASS untouched (not for this host: the kernel decides)
//
// The route back (route.h: our own address or a subnet broadcast as the
// source, a route not through the interface, an unknown neighbour) is
// looked up after the rewrite, by the parse path: such a query goes to the
// hidden port, where the kernel decides as it would at the game port
// (drops a martian source, or delivers it to the socket path).
//
// The socket path's replies leave from the hidden port: an egress
// program on the [xdp] interfaces (bpf/divert_tc.c, an object of its own;
// attached through tcx from Linux 6.6, before it as a tc filter,
// clsact_linux.go) sets their source port back to the game port, with bpf_l4_csum_replace
// (which leaves a CHECKSUM_PARTIAL sum alone: a GSO batch is rewritten
// once, before it is cut), as sqredirect does. A port rewrite rather than
// a raw socket for the replies: the socket path's sends (sendmmsg, UDP
// GSO, its budgets and counters) stay as they are, the kernel keeps
// fragmenting, routing and resolving neighbours, and nothing in user space
// needs CAP_NET_RAW; a rewrite rather than NAT (nftables): conntrack would
// tie the client's later game traffic to the redirect (sqproxy's warning).
// Stale means silence here too: a claimed query is dropped by the program
// or reaches the silent socket path, never the game server. The
// [upstream] poll of the game server (its own address or loopback, from
// the host itself) is delivered locally and never crosses an interface's
// XDP hook: it is not diverted. Replies whose route back leaves through an
// interface not in [xdp] interfaces are not rewritten: list every
// interface the game server's traffic uses.
//
// Divert needs the fast path: without [xdp] interfaces the config is
// refused; when the program or the egress program cannot be attached
// (no CAP_BPF / CAP_NET_ADMIN, a kernel before 5.18) the start is refused
// with the reason and the alternative, relay mode: a divert that silently
// did nothing would leave the game server answering every query. Counted
// in queryd_xdp_diverted_total{result} (xdp, socket, dropped, passed; per
// server: the divert entry's server index, its server="NAME" series)
// and queryd_xdp_divert_rewritten_total (egress rewrites, host-wide: one
// egress program; a GSO batch counts once). A divert address change needs
// a restart.
//
// Joins ([sleep], issue 41): queryd does not own the game port in divert
// mode, so it cannot see a player arrive at a game server it has stopped.
// The program can: while a server rests (Divert.Rest(true): its divert
// addresses in the table divert_rests, bpf/divert_wake.h), a game datagram
// to one of them (it passed the kernel's checks and no protocol claims
// it: divert_in's one demux over every protocol; a query of a protocol
// that is off or not taken is never a join) is reported on the ring buffer
// divert_joins (16 KiB: the address and the source), at most once per
// address every 10 ms (a timestamp in its divert_rests entry, taken with a
// compare and swap), and passed as before: nothing is held, the player's
// retries reach the game server once it is up. One goroutine (from the
// first Divert until the fast path closes) reads the ring and calls the
// owning Divert's OnJoin function (the daemon's: Sleeper.Join). Counted
// in queryd_xdp_divert_joins_total{result} (reported, ring_full,
// rate_limited; per server).
//
// The egress program is attached through tcx (a BPF link: nothing is left
// behind by a crash) where the kernel has it (6.6); where it has not
// (ebpf.ErrNotSupported: Debian 12's 6.1, Ubuntu 22.04's 5.15), the same
// program (SchedCLS, returning TC_ACT_UNSPEC: the next filter runs) is a
// cls_bpf filter in direct-action mode on the egress hook of the
// interface's clsact qdisc, made with rtnetlink as tc(8) would: queryd's
// is the filter at pref 20804 handle 0x5144 named queryd_divert_tc (`tc
// filter show dev eth0 egress`), before the filters tc adds without a
// priority (49152 and below). A clsact qdisc already there is shared, and
// kept on close; one queryd made is deleted on close when no filter is
// left on it. Another filter at our priority and handle is refused, never
// replaced. A tc filter is not a link: a queryd killed with SIGKILL leaves
// its filter (with its own, frozen copy of the egress table: a later
// socket on a hidden address and port of the dead queryd's would have its
// source port rewritten) until the next start replaces it, or `tc filter
// del dev eth0 egress pref 20804` removes it; a clsact qdisc it made
// stays. For tests only, QUERYD_TEST_DIVERT_CLSACT=1 in queryd's
// environment forces the tc filter where tcx works (the divert tests run
// both attaches on one kernel).
//
// What divert needs of the kernel beyond the egress attach is the XDP
// program's: 5.18 (bpf_xdp_store_bytes; bpf_ktime_get_coarse_ns is 5.11,
// bpf_fib_lookup with no flags and its FWD_DISABLED answer 4.18, bounded
// loops 5.3, -mcpu=v3 5.1). The unbound queryd_xdp calls no kfunc, so a
// kernel before 6.8 (the VLAN tag kfunc) or 6.3 (device-bound programs)
// loads it; there an interface with VLAN devices on it passes every frame.
// The verifier's counts below are this kernel's (6.18); an older
// verifier walks the same program differently, and 6.1 itself has not
// been run.
//
// In host mode divert is per server (FastPath.Divert(server, addrs)):
// each server's divert addresses carry its index in the per-destination
// tables, its protocols (SetProtocols(server) rewrites their mask) and its
// counters; the egress program is loaded with the first and kept until
// the fast path closes. A server that stops on SIGHUP (its file removed)
// releases its divert addresses before its sockets close, and SetServers'
// removal of a server drops them too: its game server's queries reach it
// again. An address another server diverts is refused (config refuses it
// first: a divert address is occupied like a listen address). The checks
// (strict.h) of a diverted frame use its hidden port's destination in
// dests: the server's bound address on that interface. Without divert the
// hook costs every frame one array read (divert_on); with it, a hash lookup
// of the destination. The verifier's work on the program about doubled
// with divert in the one-server program (queryd_xdp: 98,510 → 199,029
// instructions processed, of its 1,000,000); with host mode's program,
// where the parse path (handle) and divert_in are functions of their own
// (inlined together their frames passed the 512 bytes of stack), the
// device-bound program takes 151,845 (11,174 instructions after
// translation).
//
// # Attaching
//
// [xdp] interfaces = ["eth0"] (empty, the default: off) and mode = "native"
// (in the driver; when the driver refuses, generic with a warning) or
// "generic" (xdp.Mode). The program is attached through a BPF link: a daemon that
// crashes leaves nothing attached, and it is detached on exit. Loading needs
// CAP_BPF and CAP_NET_ADMIN (or root) and Linux 5.18 or later
// (bpf_xdp_store_bytes); without them, or when the kernel or the interface
// refuses, queryd logs why and serves on the socket path: it never refuses
// to start. When another XDP program holds the interface (EBUSY, EEXIST)
// the error says so: "another XDP program (another queryd?) holds eth0".
// docs/deploy.md has the systemd drop-in and the container flags.
//
// # Building
//
// bpf/queryd.c is the flow, top to bottom (katran's balancer.bpf.c shape):
// the entry, divert's hook (bpf/divert.h holds its tables and rewrites),
// the parse path (Ethernet, IP, UDP, the destination; the kernel's checks
// in strict.h and route.h), the demux and the dispatch to one handler per
// protocol. The protocols are one list, bpf/protocols.h, in the socket
// path's demux order: a line each, #include "NAME.h", where NAME is the
// module's Name. A protocol's header holds its claim (NAME_claim: whether
// a payload is a request of it, one function for the listen path's demux
// and divert's), its handler (NAME_handle: answer, drop or pass) and its
// reply slots (enum NAME_slot), and ends, after its include guard, with
// its entry PROTOCOL(NAME, NAME_SLOTS); queryd.c builds every list from
// the entries: the protocols' rows in the counters, the packet rates
// (config's rate_cost) and divert's mask, the reply slots, the demux, the
// dispatch, and fast_protocols, the table package xdp reads from the
// object's BTF and read-only data at load. So the Go side names no
// protocol: the metrics' protocol labels, the rows, the reply slots (a
// module's module.FastReply{Query: "status"} fills QUAKE3_STATUS) and the
// packet rates (dgram.PacketLimited, by Name) all come from that table.
// Adding a protocol to the fast path is its header and its line
// (TestXDPOneLine builds the program with one more and runs it); the
// program's tables hold MAX_PROTOS (8) rows and MAX_SLOTS (64) replies.
// SetProtocols logs the fast replies of a module the program does not
// answer.
//
// The other headers hold one concern each, and none calls back into
// queryd.c: consts.h and structs.h (the constants and map values Go
// shares, generated into queryd_bpfel.go by bpf2go -type, never mirrored
// by hand), maps.h, counters.h, parsing.h (one cursor helper per header,
// each with its own bounds check), csum.h, token.h (SipHash-2-4), budget.h
// (GCRA, the packet rates), reply.h (the XDP_TX reply), challenge.h (a
// challenge from a module's template). bpf/test.c holds the tests' and the
// benchmark's programs in an object of their own (querydtest_bpfel.o): the
// daemon loads only queryd_bpfel.o. Both are compiled with clang through
// cilium/ebpf's bpf2go (go generate ./xdp, with Debian's clang 14 and
// llvm-strip) against the headers vendored in bpf/include only (-nostdinc:
// any host architecture); the objects and their Go bindings are committed,
// so that go build needs no clang, and .ci/run regenerates them and fails
// on a difference. C rather than cilium/ebpf's asm package: the program parses
// six protocols, computes SipHash-2-4, a GCRA and two checksums, and is
// several hundred lines of C the verifier checks; written as instructions
// by hand it would be several times longer and much harder to review.
// Elsewhere than Linux on a little-endian CPU, New returns ErrUnsupported.
package xdp
