//go:build unix

package relay

import (
	"os"
	"syscall"
)

// diskUsage is the bytes allocated to a file (st_blocks × 512).
func diskUsage(st os.FileInfo) int64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Blocks * 512
	}
	return st.Size()
}
