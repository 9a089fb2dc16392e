package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on every Linux
// platform Go supports.
const clockTicks = 100

// postgresCPU returns the CPU seconds used so far by each Postgres process that serves db or
// writes WAL, by pid. Backends show the database in their process title
// ("postgres: 15/main: postgres bench_wfhost 127.0.0.1(5432) idle").
func postgresCPU(db string) map[int]float64 {
	out := map[int]float64{}
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		title, err := os.ReadFile(p)
		if err != nil || !strings.HasPrefix(string(title), "postgres:") {
			continue
		}
		t := string(title)
		if !strings.Contains(t, " "+db+" ") && !strings.Contains(t, "walwriter") {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command name: state is the first, utime the 12th,
		// stime the 13th.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 13 {
			continue
		}
		utime, _ := strconv.ParseFloat(fields[11], 64)
		stime, _ := strconv.ParseFloat(fields[12], 64)
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		out[pid] = (utime + stime) / clockTicks
	}
	return out
}

// pgCPUDelta sums what each process used between two readings; a backend that started in
// between counts from zero.
func pgCPUDelta(before, after map[int]float64) float64 {
	total := 0.0
	for pid, v := range after {
		total += v - before[pid]
	}
	return total
}
