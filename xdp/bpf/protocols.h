// SPDX-License-Identifier: (MIT OR GPL-2.0-only)
//
// The fast path's protocols: the one list, in demux order (the socket
// path's, protocols/protocols.go). Adding a protocol is its header and its
// line here.
//
// A protocol's header NAME.h (NAME: its module's Name(), "quake3") holds,
// inside an include guard (not #pragma once):
//
//	enum NAME_slot { NAME_X, ..., NAME_SLOTS }   its pre-encoded replies; the module's
//	                                             FastReply{Query: "x"} fills NAME_X (a range
//	                                             NAME_X ... NAME_X_LAST takes Index)
//	static int NAME_claim(const struct query *q) whether the payload is a whole request
//	                                             of it, its shape and not its first bytes
//	                                             (queryd.c's demux, for listen and divert
//	                                             addresses alike: divert passes what no
//	                                             claim takes to the game server)
//	static int NAME_handle(struct query *q, int v6)  answers (reply.h's answer), drops
//	                                             or passes (pass) a claimed request
//
// and, after its guard, its entry: PROTOCOL(NAME, NAME_SLOTS). queryd.c
// includes this file once for the headers' code, then again with
// PROTOCOL defined to build each list from the entries (the guards keep
// the code out): the rows of the counters, packet rates and divert's mask
// (enum proto), the reply slots (enum slot_base), the demux and the
// dispatch, and the table the Go side reads (struct fast_protocols). The
// handlers name no row and no other protocol: the dispatch sets the
// query's row and first slot (struct query's proto and slot0).
//
// No include guard: included once per list.

#include "a2s.h"
#include "gamespy4.h"
#include "sagl.h"
#include "quake3.h"
#include "bedrock.h"
#include "sqp.h"
