package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTick is USER_HZ, the unit of utime and stime in /proc/<pid>/stat. It
// is 100 on every Linux architecture Go supports.
const clockTick = 100

// procCPU returns the user plus system CPU time a process has used so far,
// from /proc/<pid>/stat (fields 14 and 15, counted after the command name,
// which may hold spaces and parentheses).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("process CPU: %w", err)
	}
	return parseProcStat(b)
}

func parseProcStat(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("process CPU: no command name in /proc stat")
	}
	f := bytes.Fields(b[i+1:])
	// After ")": state is field 3, utime field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("process CPU: /proc stat has %d fields after the name", len(f))
	}
	ut, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	st, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("process CPU: bad utime/stime %q %q", f[11], f[12])
	}
	return time.Duration(ut+st) * time.Second / clockTick, nil
}
