//go:build !unix

package relay

import "os"

// diskUsage is the file's size (no block count here).
func diskUsage(st os.FileInfo) int64 { return st.Size() }
