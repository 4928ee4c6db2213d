package bindings

import "golang.org/x/sys/unix"

// applyLimits sets l on the running process pid (prlimit(2): no
// privilege is needed to lower the limits of one's own child).
func applyLimits(pid int, l Limits) error {
	for _, r := range []struct {
		res int
		v   uint64
	}{
		{unix.RLIMIT_CPU, l.CPUSeconds},
		{unix.RLIMIT_AS, l.AddressSpace},
		{unix.RLIMIT_NOFILE, l.OpenFiles},
		{unix.RLIMIT_NPROC, l.Processes},
	} {
		var old unix.Rlimit
		if err := unix.Prlimit(pid, r.res, nil, &old); err != nil {
			return err
		}
		v := min(r.v, old.Max) // raising a hard limit needs privilege
		lim := unix.Rlimit{Cur: v, Max: v}
		if err := unix.Prlimit(pid, r.res, &lim, nil); err != nil {
			return err
		}
	}
	return nil
}
