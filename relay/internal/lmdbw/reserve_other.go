//go:build !linux

package lmdbw

// reserveFile does nothing where fallocate is not available.
func reserveFile(path string, size int64) error { return nil }
