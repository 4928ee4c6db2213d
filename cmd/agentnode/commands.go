package main

import (
	"context"
	"strings"
)

// command is one subcommand: its one-line summary and either its entry
// point (run) or, for a group such as `agent`, its subcommands (subs).
type command struct {
	summary string
	run     func(ctx context.Context, m *Main, args []string) error
	subs    map[string]command
}

// leaf is a command that runs.
func leaf(summary string, run func(ctx context.Context, m *Main, args []string) error) command {
	return command{summary: summary, run: run}
}

// group is a command that dispatches to its subcommands.
func group(summary string, subs map[string]command) command {
	return command{summary: summary, subs: subs}
}

// commandTable is every command of the binary: the one table Run
// dispatches with and help, shell completion (completion.go) and the docs
// test (flagsets.go) read. It is built when asked for, so that nothing
// runs at package initialisation.
func commandTable() map[string]command {
	return map[string]command{
		"agent": group("install and run agents on the node: install, list, show, upgrade, nudge, learn, remove, cap, skill, mcp, state", map[string]command{
			"install": leaf("instantiate an agent from a definition (new keypair, kind 0)", runAgentInstall),
			"list":    leaf("list the agents installed on the node", runAgentList),
			"show":    leaf("show an agent; --effective: its prompt, tools and lessons", runAgentShow),
			"remove":  leaf("uninstall an agent (its key is deleted)", runAgentRemove),
			"upgrade": leaf("show what changes to the latest definition version; --yes applies it", runAgentUpgrade),
			"nudge": group("attach or detach nudges", map[string]command{
				"add":    leaf("attach a nudge (kind 4201) to an agent", runAgentNudgeAdd),
				"remove": leaf("detach a nudge from an agent", runAgentNudgeRemove),
			}),
			"learn": leaf("make an agent publish a lesson (kind 4129) signed with its own key", runAgentLearn),
			"cap": group("install, upgrade, remove and list an agent's capability packages", map[string]command{
				"install": leaf("install a capability package on an agent (from the relay, or a signed local file)", runAgentCapInstall),
				"upgrade": leaf("move an installed capability to another version (default: the latest)", runAgentCapUpgrade),
				"remove":  leaf("uninstall a capability from an agent (its state stays)", runAgentCapRemove),
				"list":    leaf("list the capabilities installed on an agent", runAgentCapList),
			}),
			"skill": group("NIP-AD skills (kind 4202) on an agent: its instructions join the prompt, its files the agent's home", map[string]command{
				"add": leaf("install a skill on an agent (an untrusted author's needs --accept)", runAgentSkillAdd),
			}),
			// NIP-AD MCP servers run a command on this machine: only on the owner's approval (agent_mcp.go).
			"mcp": group("NIP-AD MCP servers (kind 4200) on an agent: add (pending), list, approve or deny; approved ones run sandboxed", map[string]command{
				"add":     leaf("record a kind-4200 server on an agent, pending the owner's approval (nothing runs)", runAgentMCPAdd),
				"list":    leaf("list an agent's MCP servers: the exact command, env names, author, trust and state", runAgentMCPList),
				"approve": leaf("approve a pending server (--event ID as shown; an untrusted author's needs --accept-untrusted)", runAgentMCPApprove),
				"deny":    leaf("deny a server (--event ID as shown): it never runs, and stops if it ran", runAgentMCPDeny),
			}),
			// The owner's decision on what of an agent's state anyone else reaches (docs/ASM.md §6).
			"state": group("open or close a schema of an agent's state to others (strangers, DM correspondents, other agents)", map[string]command{
				"open":  leaf("let others read the agent's documents of a schema, or write documents of their own in it", runAgentStateOpen),
				"close": leaf("take back what agent state open gave", runAgentStateClose),
			}),
		}),
		"backup":  leaf("write a consistent copy of the data directory (works while serve runs)", runBackup),
		"restore": leaf("restore a backup into a new data directory", runRestore),
		"compact": leaf("rewrite the event store without its free pages (serve stopped)", runCompact),
		"bench":   leaf("measure the relay against plain khatru+lmdb (bench ingest|query|fanout|hostile|relay)", runBench),
		"cap": group("ACP capability packages: sign, verify, publish (kind 30199), search, show", map[string]command{
			"sign":    leaf("sign an .acp.yaml capability package (writes metadata.signature)", runCapSign),
			"verify":  leaf("check an .acp.yaml package: valid and signed (exit 0 only then)", runCapVerify),
			"publish": leaf("publish a signed .acp.yaml package as a kind-30199 event", runCapPublish),
			"search":  leaf("search published capability packages (name, description, triggers, tools)", runCapSearch),
			"show":    leaf("show one published package: cap URI (latest or @version), name, or naddr", runCapShow),
		}),
		"chat": leaf("talk to an agent on the node (needs a model configured on the node)", runChat),
		"claim": group("add or remove agents in an owner's claims (kind 14199)", map[string]command{
			"add":    leaf("claim agents as the owner's", runClaimAdd),
			"remove": leaf("stop claiming agents", runClaimRemove),
		}),
		"comment":    leaf("comment on a lesson, or reply to a comment (NIP-22, kind 1111)", runComment),
		"completion": leaf("print a shell completion script (bash, zsh or fish): commands, subcommands and flags", runCompletion),
		"consent": group("the owner's consent: list, approve or deny privileged operations; revoke or unrevoke agents", map[string]command{
			"list":     leaf("list the approvals (pending first with --status pending) and the revoked agents", runConsentList),
			"approve":  leaf("approve a pending operation by its approval id", runConsentApprove),
			"deny":     leaf("deny a pending operation by its approval id (--reason)", runConsentDeny),
			"revoke":   leaf("revoke an agent: from now on it answers nothing (--reason)", runConsentRevoke),
			"unrevoke": leaf("lift an agent's revocation", runConsentUnrevoke),
		}),
		"def": group("publish, list and show agent definitions (kind 4199)", map[string]command{
			"publish": leaf("publish an agent definition from flags or a YAML/JSON file", runDefPublish),
			"list":    leaf("list agent definitions (latest version of each by default)", runDefList),
			"show":    leaf("show one agent definition and how many lessons reference it", runDefShow),
			"fetch":   leaf("copy a definition from other relays (--from) to this node's relay, signature intact", runDefFetch),
		}),
		"export": leaf("write stored events as JSONL, one event a line (strfry-compatible)", runExport),
		"file": group("put, get, list and remove blobs on a Blossom server (the node's by default)", map[string]command{
			"put": leaf("upload files (signs a kind-24242 authorization with --key)", runFilePut),
			"get": leaf("download a blob by its sha256, verifying it", runFileGet),
			"ls":  leaf("list the blobs a pubkey uploaded (default: --key's)", runFileLs),
			"rm":  leaf("delete your blob by its sha256", runFileRm),
		}),
		"import": leaf("store JSONL events through the relay's own checks, reporting each refusal", runImport),
		"key": group("generate keypairs", map[string]command{
			"generate": leaf("print a new keypair (nothing is stored unless --out)", runKeyGenerate),
		}),
		"lesson": group("publish and list lessons (kind 4129)", map[string]command{
			"publish": leaf("publish a lesson learned, signed by the agent's key", runLessonPublish),
			"list":    leaf("list lessons, e.g. those of one definition", runLessonList),
		}),
		"nudge": group("publish nudges (kind 4201)", map[string]command{
			"publish": leaf("publish a nudge: a behavioural modifier and tool-set changes", runNudgePublish),
		}),
		"serve": leaf("run the node: the embedded relay and the agent daemon", runServe),
		"state": group("inspect and edit agent state (ASM): query, get, put, history", map[string]command{
			"query":   leaf("run an ASM-QL query", runStateQuery),
			"get":     leaf("print one document", runStateGet),
			"put":     leaf("create a document, or patch or replace an existing one", runStatePut),
			"history": leaf("print a document's op log", runStateHistory),
			"delete":  leaf("tombstone (or --hard purge) a document", runStateDelete),
			"gc":      leaf("run the state lifecycle (TTL, retention, compression) once", runStateGC),
			"stats":   leaf("print the counts of the last lifecycle pass and their sums", runStateStats),
		}),
		"sync":   leaf("reconcile this node's events with another relay by NIP-77 negentropy", runSync),
		"verify": leaf("check an agent's two-way owner link, or list an owner's agents", runVerify),
	}
}

// The subcommands whose entry point takes a mode.

func runAgentNudgeAdd(ctx context.Context, m *Main, args []string) error {
	return runAgentNudge(ctx, m, "add", args)
}

func runAgentNudgeRemove(ctx context.Context, m *Main, args []string) error {
	return runAgentNudge(ctx, m, "remove", args)
}

func runAgentStateOpen(ctx context.Context, m *Main, args []string) error {
	return runAgentState(ctx, m, true, args)
}

func runAgentStateClose(ctx context.Context, m *Main, args []string) error {
	return runAgentState(ctx, m, false, args)
}

func runClaimAdd(ctx context.Context, m *Main, args []string) error {
	return runClaim(ctx, m, "add", args)
}

func runClaimRemove(ctx context.Context, m *Main, args []string) error {
	return runClaim(ctx, m, "remove", args)
}

// groups is every group of table by its path ("agent", "agent cap"),
// with its subcommands: for completion.
func groups(table map[string]command) map[string]map[string]command {
	out := map[string]map[string]command{}
	var walk func(prefix string, t map[string]command)
	walk = func(prefix string, t map[string]command) {
		for name, c := range t {
			if c.subs != nil {
				path := strings.TrimSpace(prefix + " " + name)
				out[path] = c.subs
				walk(path, c.subs)
			}
		}
	}
	walk("", table)
	return out
}
