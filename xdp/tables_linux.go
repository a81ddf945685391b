//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

import "github.com/queryd/queryd/module"

// The program's constants, from the object's BTF (bpf2go -type, in
// queryd_bpfel.go; the C is bpf/consts.h and bpf/structs.h).
const (
	protoA2S     = int(querydProtoPROTO_A2S)
	protoGS4     = int(querydProtoPROTO_GS4)
	protoQ3      = int(querydProtoPROTO_Q3)
	protoSQP     = int(querydProtoPROTO_SQP)
	protoBedrock = int(querydProtoPROTO_BEDROCK)
	protoSAGL    = int(querydProtoPROTO_SAGL)
	numSlots     = int(querydSlotNSLOTS)
	replyOpen    = querydReplyFlagsREPLY_OPEN
)

// maxReply is the program's MAX_REPLY: the largest reply it sends (the
// length of struct reply's data).
const maxReply = len(querydReply{}.Data)

// protocolLabel names the program's protocol rows in metrics: the
// protocols' names.
var protocolLabel = [querydProtoNPROTO]string{
	protoA2S: "a2s", protoGS4: "gamespy4", protoQ3: "quake3",
	protoSQP: "sqp", protoBedrock: "bedrock", protoSAGL: "sagl",
}

// outcomeLabel names the program's outcome columns (responder's labels;
// answered without a token counts as "answered", as in the responder).
var outcomeLabel = [querydOutcomeNOUT]string{
	querydOutcomeOUT_ANSWERED:     "answered",
	querydOutcomeOUT_OPEN:         "answered",
	querydOutcomeOUT_CHALLENGED:   "challenged",
	querydOutcomeOUT_RATE_LIMITED: "rate_limited",
	querydOutcomeOUT_STALE:        "stale",
	querydOutcomeOUT_DENIED:       "denied",
}

// passLabel names the reasons of queryd_xdp_passed_total.
var passLabel = [querydPassReasonNPASS]string{
	querydPassReasonPASS_OTHER:     "other",
	querydPassReasonPASS_NOT_LOCAL: "not_local",
	querydPassReasonPASS_MARTIAN:   "martian",
	querydPassReasonPASS_MALFORMED: "malformed",
	querydPassReasonPASS_VLAN:      "vlan",
	querydPassReasonPASS_NO_ROUTE:  "no_route",
}

// slotOf maps a module's fast query to the program's reply slot: one per
// query, and SQP's query replies from SLOT_SQP_QUERY on, by chunks byte.
var slotOf = func() map[module.FastQuery]querydSlot {
	m := map[module.FastQuery]querydSlot{
		module.FastA2SInfo:       querydSlotSLOT_A2S_INFO,
		module.FastA2SPlayer:     querydSlotSLOT_A2S_PLAYER,
		module.FastA2SRules:      querydSlotSLOT_A2S_RULES,
		module.FastGS4Basic:      querydSlotSLOT_GS4BASIC,
		module.FastGS4Full:       querydSlotSLOT_GS4FULL,
		module.FastQ3Info:        querydSlotSLOT_Q3INFO,
		module.FastQ3Status:      querydSlotSLOT_Q3STATUS,
		module.FastSQPChallenge:  querydSlotSLOT_SQP_CHALLENGE,
		module.FastBedrockPong:   querydSlotSLOT_BEDROCK_PONG,
		module.FastSAGLChallenge: querydSlotSLOT_SAGL_CHALLENGE,
		module.FastSAGLInfo:      querydSlotSLOT_SAGL_INFO,
	}
	for c := querydSlotSLOT_SQP_QUERY; c <= querydSlotSLOT_SQP_QUERY_LAST; c++ {
		m[module.FastSQPQuery(byte(c-querydSlotSLOT_SQP_QUERY))] = c
	}
	return m
}()
