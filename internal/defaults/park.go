package defaults

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"
)

// ParkHorizon is the furthest ahead a sleeping run's wake-up may be for its pass to be kept
// parked (engine.Config.ParkHorizon): a run back later than this is not expected back soon
// enough to be worth the memory. (A wait for an event parks whatever its timeout.)
const ParkHorizon = 10 * time.Minute

// The bounds of ParkMemory's default.
const (
	minParkMemory = 64 << 20
	maxParkMemory = 1 << 30
)

// ParkMemory is the default memory budget of one host's parked passes
// (engine.Config.ParkMemory): a 32nd of the memory the process may use (the machine's, or its
// cgroup's limit when lower), at least 64 MiB and at most 1 GiB.
func ParkMemory() int64 {
	total := memTotal()
	if lim := cgroupLimit(); lim > 0 && (total == 0 || lim < total) {
		total = lim
	}
	return min(max(total/32, minParkMemory), maxParkMemory)
}

// memTotal is the machine's memory from /proc/meminfo (0 when it cannot be read).
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// cgroupLimit is the cgroup v2 memory limit of this process (0: none or unknown).
func cgroupLimit() int64 {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0 // "max"
	}
	return n
}
