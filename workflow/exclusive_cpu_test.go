package workflow

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuSnapshot is CPU time used so far by this process and by the PostgreSQL
// backends serving database dbName (Linux /proc; zero elsewhere). CPU time is
// far less sensitive than wall time to other load on a shared machine, so the
// benchmarks report it per job alongside throughput.
type cpuSnapshot struct {
	process  time.Duration
	postgres time.Duration
}

func takeCPUSnapshot(dbName string) cpuSnapshot {
	var snap cpuSnapshot
	var usage syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &usage) == nil {
		snap.process = time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	}
	if dbName == "" {
		return snap
	}
	ticks := 100.0 // USER_HZ on Linux
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, []byte("postgres: ")) || !bytes.Contains(cmdline, []byte(" "+dbName+" ")) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		// Fields after the command (which is in parentheses): utime is
		// field 14, stime 15 (1-based) of the whole line.
		rest := string(stat[bytes.LastIndexByte(stat, ')')+2:])
		fields := strings.Fields(rest)
		if len(fields) < 13 {
			continue
		}
		utime, _ := strconv.ParseFloat(fields[11], 64)
		stime, _ := strconv.ParseFloat(fields[12], 64)
		snap.postgres += time.Duration((utime + stime) / ticks * float64(time.Second))
	}
	return snap
}

func (s cpuSnapshot) sub(before cpuSnapshot) cpuSnapshot {
	return cpuSnapshot{process: s.process - before.process, postgres: s.postgres - before.postgres}
}
