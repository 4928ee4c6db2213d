package registry

import (
	"strings"
	"unicode"
)

// Weights of where a query word is found.
const (
	weightName        = 10 // the capability name, whole
	weightNamePart    = 6  // a part of the name (split on . _ -)
	weightTitle       = 5  // metadata.name
	weightTool        = 4  // a tool name or a part of it
	weightDescription = 2  // metadata.description
	weightTrigger     = 2  // a trigger value
)

// textIndex is an inverted index from word to (author, name) keys with a
// weight: the full-text search of the latest versions.
type textIndex struct {
	postings map[string]map[string]float64 // word -> key -> weight
	words    map[string][]string           // key -> its words (for removal)
}

func newTextIndex() *textIndex {
	return &textIndex{postings: map[string]map[string]float64{}, words: map[string][]string{}}
}

func (t *textIndex) add(key string, e *Entry) {
	weights := map[string]float64{}
	for word, w := range docWords(e) {
		weights[word] += w
	}
	words := make([]string, 0, len(weights))
	for word, w := range weights {
		p := t.postings[word]
		if p == nil {
			p = map[string]float64{}
			t.postings[word] = p
		}
		p[key] = w
		words = append(words, word)
	}
	t.words[key] = words
}

func (t *textIndex) remove(key string) {
	for _, word := range t.words[key] {
		if p := t.postings[word]; p != nil {
			delete(p, key)
			if len(p) == 0 {
				delete(t.postings, word)
			}
		}
	}
	delete(t.words, key)
}

// score ranks keys for the query words: the sum of the weights each word
// has in the key, times the share of query words the key matches (so a
// key matching every word ranks above one matching a single word often).
func (t *textIndex) score(words []string) map[string]float64 {
	type acc struct {
		sum  float64
		hits int
	}
	accs := map[string]*acc{}
	for _, w := range words {
		for key, weight := range t.postings[w] {
			a := accs[key]
			if a == nil {
				a = &acc{}
				accs[key] = a
			}
			a.sum += weight
			a.hits++
		}
	}
	out := make(map[string]float64, len(accs))
	for key, a := range accs {
		out[key] = a.sum * float64(a.hits) / float64(len(words))
	}
	return out
}

// docWords yields every (word, weight) of an entry.
func docWords(e *Entry) map[string]float64 {
	out := map[string]float64{}
	add := func(text string, w float64) {
		for _, word := range tokenize(text) {
			out[word] += w
		}
	}
	out[strings.ToLower(e.Name)] += weightName
	add(e.Name, weightNamePart)
	add(e.Metadata.Name, weightTitle)
	add(e.Metadata.Description, weightDescription)
	for _, tr := range e.Metadata.Triggers {
		add(tr.Value, weightTrigger)
	}
	for _, tool := range e.Tools {
		out[strings.ToLower(tool)] += weightTool
		add(tool, weightTool)
	}
	return out
}

// tokenize lower-cases text and splits it into words of letters and digits.
func tokenize(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
