package quake3

import "bytes"

// maxLine is how many bytes of a connectionless datagram's first line
// ioquake3 reads (MSG_ReadStringLine into MAX_STRING_CHARS, 1,024 with its
// NUL): the rest of a longer line is never seen.
const maxLine = 1023

// Words of the connectionless commands ioquake3 answers from its global
// bucket (SVC_RateLimit(&outboundLeakyBucket, 10, 100) in SVC_Status,
// SVC_Info and SV_GetChallenge).
var (
	wordChallenge = []byte("getchallenge")
)

// command returns the first two tokens (Cmd_Argv(0) and Cmd_Argv(1)) of a
// connectionless datagram p as ioquake3's SV_ConnectionlessPacket reads
// them, slices of p (nil when absent); ok is false when p does not start
// FF FF FF FF. The line is read as MSG_ReadStringLine does (after the
// header, up to the first "\n" or NUL, at most maxLine bytes) and
// tokenized as Cmd_TokenizeString does (tokenAt). MSG_ReadStringLine turns
// '%' and bytes above 127 into '.': neither is a separator, so the tokens'
// bounds and a comparison with a command word are the same on the raw
// bytes. It never allocates.
func command(p []byte) (argv0, argv1 []byte, ok bool) {
	if len(p) < 4 || !bytes.Equal(p[:4], header) {
		return nil, nil, false
	}
	line := p[4:]
	if i := bytes.IndexAny(line, "\n\x00"); i >= 0 {
		line = line[:i]
	}
	line = line[:min(len(line), maxLine)]
	argv0, i, ok0 := tokenAt(line, 0)
	if !ok0 {
		return nil, nil, true
	}
	argv1, _, _ = tokenAt(line, i)
	return argv0, argv1, true
}

// tokenAt returns the token of s that starts at or after i as ioquake3's
// Cmd_TokenizeString2 (qcommon/cmd.c) reads it, and the index after it;
// ok is false when s has no token left. Whitespace is every byte from 1
// to 32 (a byte above 127 is not: ioquake3 has made it '.'); "//" ends the
// line; "/*" to the next "*/" is skipped (the search starts at the '*', so
// "/*/" is a whole comment); a token starting with '"' runs to the next
// '"' or the end, quotes not included; any other token runs to
// whitespace, a '"', "//" or "/*".
func tokenAt(s []byte, i int) (tok []byte, next int, ok bool) {
	for {
		for i < len(s) && s[i] <= ' ' {
			i++
		}
		if i >= len(s) || (s[i] == '/' && i+1 < len(s) && s[i+1] == '/') {
			return nil, len(s), false
		}
		if s[i] != '/' || i+1 >= len(s) || s[i+1] != '*' {
			break
		}
		end := bytes.Index(s[i+1:], []byte("*/"))
		if end < 0 {
			return nil, len(s), false
		}
		i += 1 + end + 2
	}
	if s[i] == '"' {
		start := i + 1
		end := bytes.IndexByte(s[start:], '"')
		if end < 0 {
			return s[start:], len(s), true
		}
		return s[start : start+end], start + end + 1, true
	}
	start := i
	for i < len(s) && s[i] > ' ' && s[i] != '"' &&
		(s[i] != '/' || i+1 >= len(s) || (s[i+1] != '/' && s[i+1] != '*')) {
		i++
	}
	return s[start:i], i, true
}

// isWord reports whether tok is the lower-case ASCII word w in any case,
// as ioquake3's Q_stricmp compares (it folds only A-Z).
func isWord(tok, w []byte) bool {
	return len(tok) == len(w) && hasPrefixFold(tok, w)
}

// GloballyLimited reports whether p is a connectionless command that
// ioquake3 answers from its one global bucket for every source (a burst of
// 10, then one per 100 ms: SVC_RateLimit(&outboundLeakyBucket, 10, 100)):
// getstatus, getinfo or getchallenge as its parser reads them (command).
// queryd's own [upstream] poll draws on that bucket too, so relay mode
// passes such datagrams at [quake3] pass_rate (Module.PassLimit).
func GloballyLimited(p []byte) bool {
	argv0, _, ok := command(p)
	return ok && (isWord(argv0, cmdStatus) || isWord(argv0, cmdInfo) || isWord(argv0, wordChallenge))
}
