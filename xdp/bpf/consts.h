// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// The constants the program shares with package xdp. They are enums so
// that they are in the object's BTF (as the types of map keys, struct
// fields or function parameters), from which bpf2go (-type) writes them
// into queryd_bpfel.go: the Go side never mirrors them by hand.
#pragma once

// Reply slots: which pre-encoded reply a query gets (xdp/tables_linux.go
// maps the modules' fast queries onto them).
enum slot {
	SLOT_A2S_INFO,
	SLOT_A2S_PLAYER,
	SLOT_A2S_RULES,
	SLOT_GS4_BASIC,
	SLOT_GS4_FULL,
	SLOT_Q3_INFO,
	SLOT_Q3_STATUS,
	SLOT_SQP_CHALLENGE,  // a template: the token is written in
	SLOT_BEDROCK_PONG,
	SLOT_SAGL_CHALLENGE, // a template: the token is written in
	SLOT_SAGL_INFO,
	SLOT_SQP_QUERY,      // + the chunks byte: SQP_CHUNKS slots
	SLOT_SQP_QUERY_LAST = SLOT_SQP_QUERY + 31,
	NSLOTS,
};

// Protocols and outcomes: the rows and columns of the counters.
enum proto { PROTO_A2S, PROTO_GS4, PROTO_Q3, PROTO_SQP, PROTO_BEDROCK, PROTO_SAGL, NPROTO };
enum outcome { OUT_ANSWERED, OUT_OPEN, OUT_CHALLENGED, OUT_RATE_LIMITED, OUT_STALE, NOUT };

// Reply flags.
enum reply_flags {
	REPLY_OPEN = 1, // answered without a valid token (A2S_INFO, info_challenge off)
};

// Sizes: the Go side reads them as the lengths of the generated structs'
// arrays (struct reply's data, struct config's listen).
#define MAX_REPLY 1472 // one Ethernet frame's UDP payload over IPv4 at MTU 1500
#define MAX_LISTEN 8   // listen table entries
#define MAX_SOURCES 4096 // sources counted between two drains (the sources map)

#define SQP_CHUNKS (SLOT_SQP_QUERY_LAST - SLOT_SQP_QUERY + 1) // SQP chunks bytes with a slot each

#define EPOCH_NS 30000000000ULL // a token's epoch: 30 s (challenge.Issuer's)
