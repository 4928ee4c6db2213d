package asmql

import (
	"errors"
	"testing"
)

// FuzzParse: Parse never panics and returns only coded errors; a query it
// accepts compiles, and survives MarshalJSON -> Parse unchanged.
//
//	go test -tags libsecp256k1 -run '^$' -fuzz FuzzParse -fuzztime 30s ./agentd/state/asmql/
func FuzzParse(f *testing.F) {
	seeds := []string{
		`{"select":["id","title"],"from":"did:nuwa:state:note#v1","where":{"tags":{"$contains":"meeting"}},"order":[{"field":"updatedAt","direction":"desc"}],"limit":20,"cursor":"eyJ2IjoxfQ"}`,
		`{"from":"x","where":{"$or":[{"a":1},{"b.c.0":{"$in":[1,"x",null,true]}}],"$not":{"d":{"$exists":false}}}}`,
		`{"from":"x","where":{"n":{"$gt":1,"$lt":3,"$not":{"$eq":2}}},"order":[{"field":"n"},{"field":"id","direction":"desc"}]}`,
		`{"from":"x","where":{"$and":[{"$.id":"x"},{"createdAt":{"$gte":0}}]},"limit":0}`,
		`{"from":"x","where":{"a":{"$nin":[]},"s":{"$ne":null}}}`,
		`{"from":"x","where":{"a') OR 1=1 --":1}}`,
		`{"from":"x","where":{"a":{"$regex":"x"}}}`,
		`{"from":"x","limit":1e300}`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`,
		`{"from":"x","where":{"a":1,"a":2}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := Parse(data)
		if err != nil {
			var qe *Error
			if !errors.As(err, &qe) || qe.Code == "" {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		if _, _, err := Compile(q, testTarget, Limits{}); err != nil && !errors.Is(err, ErrBadCursor) {
			t.Fatalf("parsed but does not compile: %v", err)
		}
		q.Cursor = ""
		checkRoundTrip(t, q)
	})
}
