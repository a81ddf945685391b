// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// The constants the program shares with package xdp. They are enums so
// that they are in the object's BTF (as the types of map keys, struct
// fields or function parameters), from which bpf2go (-type) writes them
// into queryd_bpfel.go: the Go side never mirrors them by hand. The one
// exception is MAX_ROUTES below, a #define (a map's size, not in the BTF):
// package xdp mirrors it as maxRoutes, and TestMaxRoutesMirrored checks the
// two agree.
#pragma once

// The protocols' rows (the counters', the packet rates', divert's mask)
// are their places in bpf/protocols.h, the one list; a program holds at
// most MAX_PROTOS of them (the size of those tables, which the Go side reads
// from the generated structs).
enum proto_limit {
	MAX_PROTOS = 8,
};

// Outcomes: the columns of the counters.
// OUT_UNPROVEN_SHED: dropped by the proven-source tier (budget.h's shed).
enum outcome { OUT_ANSWERED, OUT_OPEN, OUT_CHALLENGED, OUT_RATE_LIMITED, OUT_STALE, OUT_DENIED, OUT_UNPROVEN_SHED, NOUT };

// Why a datagram to a listen address was left to the socket path (the
// kernel): the reasons of queryd_xdp_passed_total.
enum pass_reason {
	PASS_OTHER,     // not a query the program answers (or a reply it does not send)
	PASS_NOT_LOCAL, // not addressed to this interface: destination MAC or IP
	PASS_MARTIAN,   // a source the kernel would not answer: multicast MAC, martian IP
	PASS_MALFORMED, // a header the kernel drops: lengths, version, checksums
	PASS_VLAN,      // it came with a VLAN tag (stripped by the driver), or may have
	PASS_NO_ROUTE,  // the route back is not this interface, or its neighbour is unknown
	NPASS,
};

// Address table values (local_addrs).
enum addr_kind {
	ADDR_LOCAL = 1,     // an address of the interface: queries to it are answered
	ADDR_BROADCAST = 2, // its subnet broadcast: never a source, never answered
};

// Interface flags (struct iface).
enum iface_flags {
	IFACE_VLAN_UPPERS = 1, // the interface has VLAN devices on it
};

// The servers one program answers for: the per-server tables' size (the
// Go side checks that it is config.MaxServers).
enum server_limit {
	MAX_SERVERS = 256,
};

// Reply flags.
enum reply_flags {
	REPLY_OPEN = 1, // answered without a valid token (A2S_INFO, info_challenge off)
};

// Sizes: the Go side reads them as the lengths of the generated structs'
// arrays (struct reply's data) or the maps' sizes.
#define MAX_SLOTS 64 // reply slots of all protocols together (queryd.c checks NSLOTS against it)
#define MAX_REPLY 1472 // one Ethernet frame's UDP payload over IPv4 at MTU 1500
#define MAX_DESTS 16384 // destinations (interface, local address, port) of all servers
#define MAX_IFACES 64  // interfaces the program may be attached to
#define MAX_ADDRS 4096 // local addresses of those interfaces
#define MAX_DENY 16384 // [limits] deny prefixes of all servers
#define MAX_ROUTES 65536 // routes of the main table mirrored for hosts that do not forward
#define MAX_SOURCES 4096   // sources counted between two drains (the sources map)
#define NSEEN 1024         // slots of the seen table, per CPU (a power of 2)

#define PROVEN_WAYS 4   // sources per bucket of the proven table
#define PROVEN_SHIFT 30 // its times: monotonic ns >> 30 (1.07 s units)

#define EPOCH_NS 30000000000ULL // a token's epoch: 30 s (challenge.Issuer's)
