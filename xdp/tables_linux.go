//go:build linux && (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package xdp

// The program's constants, from the object's BTF (bpf2go -type, in
// queryd_bpfel.go; the C is bpf/consts.h and bpf/structs.h). The
// protocols' rows and reply slots are not among them: they come from the
// program's list (list.go).
const replyOpen = querydReplyFlagsREPLY_OPEN

// maxReply is the program's MAX_REPLY: the largest reply it sends (the
// length of struct reply's data).
const maxReply = len(querydReply{}.Data)

// maxProtos is the program's MAX_PROTOS: the rows of its per-protocol
// tables (counters, packet rates, divert's mask).
const maxProtos = len(querydStats{}.In)

// outcomeLabel names the program's outcome columns (responder's labels;
// answered without a token counts as "answered", as in the responder).
var outcomeLabel = [querydOutcomeNOUT]string{
	querydOutcomeOUT_ANSWERED:     "answered",
	querydOutcomeOUT_OPEN:         "answered",
	querydOutcomeOUT_CHALLENGED:   "challenged",
	querydOutcomeOUT_RATE_LIMITED: "rate_limited",
	querydOutcomeOUT_STALE:        "stale",
	querydOutcomeOUT_DENIED:       "denied",

	querydOutcomeOUT_UNPROVEN_SHED: "unproven_shed",
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
