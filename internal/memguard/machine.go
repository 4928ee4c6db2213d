package memguard

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// machineFraction is the share of the machine's (or the cgroup's) memory
// the default ceiling takes: the rest is for the page cache the stores
// read through, and for everything else on the machine.
const machineFraction = 0.75

// DefaultCeiling is machineFraction of the smaller of the machine's
// memory (/proc/meminfo MemTotal) and the process's cgroup limit
// (cgroup v2 memory.max, or v1 memory.limit_in_bytes); 0 when neither can
// be read (no ceiling).
func DefaultCeiling() int64 {
	total := MachineMemory()
	if lim := cgroupLimit(); lim > 0 && (total == 0 || lim < total) {
		total = lim
	}
	return int64(float64(total) * machineFraction)
}

// MachineMemory is MemTotal from /proc/meminfo in bytes (0 if unknown).
func MachineMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// cgroupLimit is the memory limit of the process's cgroup in bytes (0:
// none or unknown).
func cgroupLimit() int64 {
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
		if err == nil && v > 0 && v < 1<<60 { // "max" and v1's huge "unlimited" fail or exceed this
			return v
		}
	}
	return 0
}
