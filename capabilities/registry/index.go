package registry

import (
	"strings"

	"github.com/agentnode/agentnode/capabilities/cap"
	"github.com/nbd-wtf/go-nostr"
)

// index holds every package version, the latest version per (author,
// name), and the search postings of those latest versions. Callers hold
// the Registry's lock.
type index struct {
	byAddr map[string]*Entry   // author:d -> entry
	byID   map[string]*Entry   // event id -> entry
	byName map[string][]*Entry // name -> every version of every author
	latest map[string]*Entry   // author\x00name -> highest version
	search *textIndex
}

func newIndex() *index {
	return &index{byAddr: map[string]*Entry{}, byID: map[string]*Entry{},
		byName: map[string][]*Entry{}, latest: map[string]*Entry{}, search: newTextIndex()}
}

func addrKey(author, d string) string       { return author + ":" + d }
func authorName(author, name string) string { return author + "\x00" + name }

// add stores e. For one address the newer event wins (NIP-01 addressable
// semantics; the relay refuses a changed package, so this is a re-publish).
func (x *index) add(e *Entry) {
	ak := addrKey(e.Author, e.Name+"@"+e.Version)
	if old, ok := x.byAddr[ak]; ok {
		if !e.CreatedAt.After(old.CreatedAt) {
			return
		}
		x.remove(old)
	}
	x.byAddr[ak] = e
	x.byID[e.EventID] = e
	x.byName[e.Name] = append(x.byName[e.Name], e)
	x.refreshLatest(e.Author, e.Name)
}

// remove drops e and recomputes its (author, name) latest version.
func (x *index) remove(e *Entry) {
	delete(x.byAddr, addrKey(e.Author, e.Name+"@"+e.Version))
	delete(x.byID, e.EventID)
	list := x.byName[e.Name]
	for i, o := range list {
		if o == e {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(x.byName, e.Name)
	} else {
		x.byName[e.Name] = list
	}
	x.refreshLatest(e.Author, e.Name)
}

// refreshLatest recomputes the highest version of (author, name) and
// re-indexes its text when it changed.
func (x *index) refreshLatest(author, name string) {
	key := authorName(author, name)
	var best *Entry
	for _, e := range x.byName[name] {
		if e.Author == author && (best == nil || cap.CompareForLatest(e.Version, best.Version) > 0) {
			best = e
		}
	}
	old := x.latest[key]
	if old == best {
		return
	}
	x.search.remove(key)
	if best == nil {
		delete(x.latest, key)
		return
	}
	x.latest[key] = best
	x.search.add(key, best)
}

// deleteBy applies a kind-5 deletion: e tags name event ids, a tags
// 30199:<pubkey>:<d> addresses; only the deletion's author's packages go.
func (x *index) deleteBy(del *nostr.Event) {
	for _, tag := range del.Tags {
		if len(tag) < 2 {
			continue
		}
		var e *Entry
		switch tag[0] {
		case "e":
			e = x.byID[tag[1]]
		case "a":
			e = x.byAddr[strings.TrimPrefix(tag[1], "30199:")]
			if !strings.HasPrefix(tag[1], "30199:") {
				e = nil
			}
		}
		if e != nil && e.Author == del.PubKey {
			x.remove(e)
		}
	}
}

// versions returns name's entries, optionally only version v and author a.
func (x *index) versions(name, version, author string) []*Entry {
	var out []*Entry
	for _, e := range x.byName[name] {
		if (version == "" || e.Version == version) && (author == "" || e.Author == author) {
			out = append(out, e)
		}
	}
	return out
}
