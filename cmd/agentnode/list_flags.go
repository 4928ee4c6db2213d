package main

import "flag"

// listFlags are the flags every list and search command has: the relays,
// --limit and --json.
type listFlags struct {
	net   netFlags
	limit int
	json  bool
}

// addListFlags adds the relay flags, --limit (default limit; what is
// the things listed) and --json to fs.
func (m *Main) addListFlags(fs *flag.FlagSet, lf *listFlags, limit int, what string) {
	m.addNetFlags(fs, &lf.net)
	fs.IntVar(&lf.limit, "limit", limit, "show at most N "+what)
	fs.BoolVar(&lf.json, "json", false, "print JSON")
}

// parse parses the flags of cmd, a list command: it takes no
// arguments and a --limit of at least 1.
func (lf *listFlags) parse(fs *flag.FlagSet, args []string, cmd string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	if lf.limit < 1 {
		return usagef("%s: --limit must be at least 1 (got %d)", cmd, lf.limit)
	}
	return nil
}
