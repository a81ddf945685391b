// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// Minecraft Bedrock: the unconnected ping (01 or 02, the i64 time, RakNet's
// magic, the client's GUID: exactly 33 bytes) gets the pong with the
// ping's time, under Bedrock's per-source packet rate and the unproven
// budget (RakNet's ping proves nothing). A 33-byte datagram with the magic
// and another id is not claimed: the socket path counts it malformed.
#ifndef QUERYD_BEDROCK_H // not #pragma once: protocols.h includes it again for its last line
#define QUERYD_BEDROCK_H

#include "reply.h"

#define BEDROCK_PING_LEN 33

// bedrock's replies (module.FastReply's Query: "pong").
enum bedrock_slot {
	BEDROCK_PONG,
	BEDROCK_SLOTS,
};

static const __u8 raknet_magic[16] = {0x00, 0xFF, 0xFF, 0x00, 0xFE, 0xFE, 0xFE, 0xFE,
				      0xFD, 0xFD, 0xFD, 0xFD, 0x12, 0x34, 0x56, 0x78};

// bedrock_claim takes an unconnected ping: exactly 33 bytes, id 01 or
// 02, RakNet's magic at offset 9.
static __always_inline int bedrock_claim(const struct query *q)
{
	const __u8 *p = q->p;
	if (q->r.plen != BEDROCK_PING_LEN || !has(q, BEDROCK_PING_LEN) || (p[0] != 0x01 && p[0] != 0x02))
		return 0;
	int same = 1;
#pragma unroll
	for (int i = 0; i < 16; i++)
		same &= p[9 + i] == raknet_magic[i];
	return same;
}

// bedrock_handle answers a ping (id 01 or 02) bedrock_claim takes.
static __always_inline int bedrock_handle(struct query *q, const int v6)
{
	const __u8 *p = q->p;
	if (!has(q, 9))
		return pass(q);
	struct reply *body = slot(q, BEDROCK_PONG);
	if (!body || !body->len)
		return pass(q);
	if (silenced(q) || shed(q))
		return XDP_DROP;
	if (!rate_allow(q)) {
		count(q, OUT_RATE_LIMITED, 0);
		return XDP_DROP;
	}
	__builtin_memcpy(q->r.echo, p + 1, 8); // the pong echoes the ping's time
	return answer(q, v6, OUT_OPEN, body, 0, 8);
}

#endif

PROTOCOL(bedrock, BEDROCK_SLOTS)
