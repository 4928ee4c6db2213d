package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip19"
)

// writeJSON writes v as indented JSON, without HTML escaping, and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// newTable returns a tab-separated writer that aligns columns; Flush it.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// printList prints items as a JSON array of their views, or as a table
// with header and one row per item (tab-separated), or as none when empty.
func printList[T, V any](w io.Writer, items []T, asJSON bool, view func(T) V, none, header string, row func(T) string) error {
	if asJSON {
		views := make([]V, 0, len(items))
		for _, it := range items {
			views = append(views, view(it))
		}
		return writeJSON(w, views)
	}
	if len(items) == 0 {
		fmt.Fprintln(w, none)
		return nil
	}
	t := newTable(w)
	fmt.Fprintln(t, header)
	for _, it := range items {
		fmt.Fprintln(t, row(it))
	}
	return t.Flush()
}

// pointer is the NIP-19 code people should share for evt: an naddr for
// replaceable and addressable kinds, else an nevent (with kind and author).
func pointer(evt *nostr.Event, relays []string) string {
	switch {
	case nostr.IsReplaceableKind(evt.Kind):
		return nip19.EncodePointer(nostr.EntityPointer{PublicKey: evt.PubKey, Kind: evt.Kind, Relays: relays})
	case nostr.IsAddressableKind(evt.Kind):
		return nip19.EncodePointer(nostr.EntityPointer{PublicKey: evt.PubKey, Kind: evt.Kind, Identifier: evt.Tags.GetD(), Relays: relays})
	}
	return nip19.EncodePointer(nostr.EventPointer{ID: evt.ID, Author: evt.PubKey, Kind: evt.Kind, Relays: relays})
}

// npub encodes a hex pubkey ("" stays "").
func npub(pk string) string {
	if pk == "" {
		return ""
	}
	s, err := nip19.EncodePublicKey(pk)
	if err != nil {
		return pk
	}
	return s
}

// shortNpub abbreviates an npub for tables: npub1abcdefgh…wxyz.
func shortNpub(pk string) string {
	s := npub(pk)
	if len(s) < 20 {
		return s
	}
	return s[:13] + "…" + s[len(s)-4:]
}

// date renders a timestamp as a UTC date and time for tables.
func date(ts nostr.Timestamp) string {
	return ts.Time().UTC().Format(time.DateTime)
}

// oneLine flattens s to a single line of at most n runes for tables.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// nonNil returns an empty slice for nil, so that JSON says [] not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
