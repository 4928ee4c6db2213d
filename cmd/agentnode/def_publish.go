package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"

	"gopkg.in/yaml.v3"

	"github.com/agentnode/agentnode/agentd"
	"github.com/agentnode/agentnode/events"
)

const defPublishUsage = `def publish [--file def.yaml|def.json] [--title T] [--role R] [--instructions I]
    [--use-criteria U] [--description D] [--tool NAME]... [--ver V] [--image URL] [--slug S]
    [--content TEXT | --content-file F] [--attach PATH]... [--blossom URL]
    [--key NSEC] [--relay URL]... [--json]

Flags given on the command line override the file's fields. The file's
files: (local paths, relative to the file) are uploaded and tagged like
--attach; --attach replaces them.`

// definitionFile is the YAML/JSON form of a definition; fields are named like the flags.
type definitionFile struct {
	Title           string   `yaml:"title"`
	Role            string   `yaml:"role"`
	Instructions    string   `yaml:"instructions"`
	UseCriteria     string   `yaml:"use_criteria"`
	UseCriteriaDash string   `yaml:"use-criteria"`
	Description     string   `yaml:"description"`
	Tools           []string `yaml:"tools"`
	Ver             string   `yaml:"ver"`
	Image           string   `yaml:"image"`
	Slug            string   `yaml:"slug"`
	Content         string   `yaml:"content"`
	// Files are local paths (relative to the file's directory) uploaded
	// and tagged like --attach; --attach on the command line replaces them.
	Files []string `yaml:"files"`
}

// defPublishFlags holds def publish's command line.
type defPublishFlags struct {
	w       writeFlags
	file    string
	fields  definitionFile
	tools   stringList
	content contentFlags
	attach  attachFlags // def_publish_files.go
}

func (m *Main) defPublishFlagSet(f *defPublishFlags) *flag.FlagSet {
	fs := m.newFlagSet("def publish", defPublishUsage)
	m.addWriteFlags(fs, &f.w)
	fs.StringVar(&f.file, "file", "", "read the definition from a YAML or JSON file")
	fs.StringVar(&f.fields.Title, "title", "", "agent name (required)")
	fs.StringVar(&f.fields.Role, "role", "", "expertise, personality, approach")
	fs.StringVar(&f.fields.Instructions, "instructions", "", "operational guidelines")
	fs.StringVar(&f.fields.UseCriteria, "use-criteria", "", "when to use this agent")
	fs.StringVar(&f.fields.Description, "description", "", "one-line description")
	fs.Var(&f.tools, "tool", "a tool the agent expects, repeatable")
	fs.StringVar(&f.fields.Ver, "ver", "", "version (default 1)")
	fs.StringVar(&f.fields.Image, "image", "", "avatar URL")
	fs.StringVar(&f.fields.Slug, "slug", "", `stable identifier ("d" tag) that versions share`)
	addContentFlags(fs, &f.content, "markdown body")
	fs.Var(&f.attach.paths, "attach", "a file of the agent: uploaded to the Blossom server, described by a kind-1063 event and referenced as [\"e\", <id>, <relay>, \"file\"]; repeatable")
	fs.StringVar(&f.attach.blossom, "blossom", "", "the Blossom server --attach uploads to (default: the first --relay's node, over http(s))")
	return fs
}

// runDefPublish: def publish (see defPublishUsage).
func runDefPublish(ctx context.Context, m *Main, args []string) error {
	f := &defPublishFlags{}
	fs := m.defPublishFlagSet(f)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("def publish: unexpected argument %q", fs.Arg(0))
	}
	def, err := f.definition(m, fs)
	if err != nil {
		return err
	}
	if len(f.attach.paths) > 0 {
		return m.publishWithFiles(ctx, "def publish", &f.w, &f.attach, def)
	}
	return m.signAndPublish(ctx, "def publish", &f.w, def.Template())
}

// definition merges the file (if any) with the flags that were set.
func (f *defPublishFlags) definition(m *Main, fs *flag.FlagSet) (*events.Definition, error) {
	d := definitionFile{}
	if f.file != "" {
		var err error
		if d, err = readDefinitionFile(f.file); err != nil {
			return nil, err
		}
	}
	fs.Visit(func(fl *flag.Flag) { f.override(&d, fl.Name) })
	if len(f.attach.paths) == 0 {
		f.attach.paths = filesOf(f.file, d.Files) // def_publish_files.go
	}
	if f.content.set() {
		content, err := f.content.read(m, "def publish")
		if err != nil {
			return nil, err
		}
		d.Content = content
	}
	if d.Title == "" {
		return nil, usagef("def publish: a title is required (--title or title: in --file)")
	}
	return d.definition(), nil
}

// override copies the flag named name from f.fields (or f.tools) into d.
func (f *defPublishFlags) override(d *definitionFile, name string) {
	switch name {
	case "title":
		d.Title = f.fields.Title
	case "role":
		d.Role = f.fields.Role
	case "instructions":
		d.Instructions = f.fields.Instructions
	case "use-criteria":
		d.UseCriteria, d.UseCriteriaDash = f.fields.UseCriteria, ""
	case "description":
		d.Description = f.fields.Description
	case "tool":
		d.Tools = f.tools
	case "ver":
		d.Ver = f.fields.Ver
	case "image":
		d.Image = f.fields.Image
	case "slug":
		d.Slug = f.fields.Slug
	}
}

func (d definitionFile) definition() *events.Definition {
	useCriteria := d.UseCriteria
	if useCriteria == "" {
		useCriteria = d.UseCriteriaDash
	}
	return &events.Definition{
		Title: d.Title, Role: d.Role, Instructions: d.Instructions, UseCriteria: useCriteria,
		Description: d.Description, Tools: d.Tools, Version: d.Ver, Image: d.Image,
		Slug: d.Slug, Content: d.Content,
	}
}

// unknownField is yaml.v3's wording for a field the type lacks.
var unknownField = regexp.MustCompile(`field (\S+) not found`)

// definitionFileFields are the keys a definition file may hold.
const definitionFileFields = "title, role, instructions, use_criteria (or use-criteria), description, tools, ver, image, slug, content, files"

// typeInError is the Go type name yaml.v3 puts in its messages.
var typeInError = regexp.MustCompile(` in type \S+`)

// readDefinitionFile decodes a YAML or JSON (a subset of YAML) definition,
// refusing unknown fields so that typos do not go unnoticed.
func readDefinitionFile(path string) (definitionFile, error) {
	var d definitionFile
	b, err := os.ReadFile(path)
	if err != nil {
		return d, fmt.Errorf("def publish: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil && !errors.Is(err, io.EOF) {
		return d, fmt.Errorf("def publish: %s: %s", path, unknownField.ReplaceAllString(typeInError.ReplaceAllString(err.Error(), ""),
			`unknown field "$1" (known: `+definitionFileFields+`)`))
	}
	if len(d.Files) > agentd.DefaultMaxFiles {
		return d, fmt.Errorf("def publish: %s: %d files; an install takes at most %d", path, len(d.Files), agentd.DefaultMaxFiles)
	}
	if d.UseCriteria != "" && d.UseCriteriaDash != "" && d.UseCriteria != d.UseCriteriaDash {
		return d, fmt.Errorf("def publish: %s: use_criteria and use-criteria disagree; keep one", path)
	}
	return d, nil
}
