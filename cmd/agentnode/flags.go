package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/agentnode/agentnode/events"
)

// stringList is a repeatable string flag (--tool a --tool b).
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

// Set appends one value.
func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// parseArgs parses flags and positional arguments in any order
// (`comment <ref> --content x` as well as `comment --content x <ref>`);
// everything after "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// groupUsage lists the subcommands of the group name.
func (m *Main) groupUsage(name string, subs map[string]command) {
	fmt.Fprintf(m.Stdout, "Usage: agentnode %s <subcommand> [flags]\n\nSubcommands:\n", name)
	for _, n := range sortedKeys(subs) {
		fmt.Fprintf(m.Stdout, "  %-10s %s\n", n, subs[n].summary)
	}
	fmt.Fprintf(m.Stdout, "\nRun `agentnode %s <subcommand> -h` for its flags.\n", name)
}

// keyFlag is a secret-key flag with an environment fallback. The key is
// only ever held in memory.
type keyFlag struct {
	flag, env string
	value     string
	hex       bool // the key was given as hex, not nsec (secret sets it; key_guard.go)
}

// addKeyFlag declares --<name> on fs, falling back to the environment variable env.
func addKeyFlag(fs *flag.FlagSet, name, env, what string) *keyFlag {
	k := &keyFlag{flag: name, env: env}
	fs.StringVar(&k.value, name, "", what+" secret key, nsec or hex (env "+env+"; prefer the env: flags show up in process lists)")
	return k
}

// secret returns the key as hex, or a clear error when it is missing or malformed.
func (k *keyFlag) secret(m *Main, cmd string) (string, error) {
	raw := k.value
	if raw == "" {
		raw = m.envOr(k.env, "")
	}
	if raw == "" {
		return "", usagef("%s: no secret key: pass --%s (nsec or hex) or set %s", cmd, k.flag, k.env)
	}
	sk, err := events.ParseSecretKey(raw)
	if err != nil {
		return "", usagef("%s: --%s: %v", cmd, k.flag, err)
	}
	k.hex = events.IsHex64(strings.ToLower(strings.TrimSpace(raw)))
	return sk, nil
}

// contentFlags are --content TEXT and --content-file FILE ("-" is stdin).
type contentFlags struct {
	text, file string
}

func addContentFlags(fs *flag.FlagSet, c *contentFlags, what string) {
	fs.StringVar(&c.text, "content", "", what)
	fs.StringVar(&c.file, "content-file", "", "read the content from FILE (- for stdin)")
}

// set reports whether either flag was given.
func (c *contentFlags) set() bool { return c.text != "" || c.file != "" }

// read returns the content from --content or --content-file.
func (c *contentFlags) read(m *Main, cmd string) (string, error) {
	if c.text != "" && c.file != "" {
		return "", usagef("%s: give --content or --content-file, not both", cmd)
	}
	if c.file == "" {
		return c.text, nil
	}
	b, err := readFileOrStdin(m, c.file)
	if err != nil {
		return "", fmt.Errorf("%s: read content: %w", cmd, err)
	}
	return string(b), nil
}

// pubkeyArgs parses agent/owner arguments (npub, nprofile or hex) to hex.
func pubkeyArgs(cmd string, args []string) ([]string, error) {
	var out []string // nil when empty: an empty Authors filter would match nothing
	for _, a := range args {
		pk, err := events.ParsePubKey(a)
		if err != nil {
			return nil, usagef("%s: %v", cmd, err)
		}
		out = append(out, pk)
	}
	return out, nil
}
