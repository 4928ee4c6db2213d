package khatru

import (
	"reflect"
	"testing"
)

// require is the part of testify's require package that upstream's tests
// use, so that they read as upstream wrote them (this module does not
// depend on testify). PATCH (agentnode).
var require requireT

type requireT struct{}

// Equal fails t unless want and got are deeply equal.
func (requireT) Equal(t testing.TB, want, got any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("not equal:\nwant: %#v\ngot:  %#v", want, got)
	}
}

// Len fails t unless obj (a map, slice, string or channel) has n elements.
func (requireT) Len(t testing.TB, obj any, n int) {
	t.Helper()
	if got := reflect.ValueOf(obj).Len(); got != n {
		t.Fatalf("length %d, want %d: %#v", got, n, obj)
	}
}
