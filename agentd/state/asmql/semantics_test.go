package asmql

import (
	"context"
	"database/sql"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// fixture is a small, hand-checked document set.
func fixture(t *testing.T) *sql.DB {
	db := openDB(t)
	doc := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	insertDocs(t, db, []testDoc{
		{id: "n1", created: 100, updated: 5, doc: doc(`{"id":"x1","title":"Hello World","n":1,"f":1.5,"ok":true,"nil":null,"tags":["a","b"],"meta":{"lang":"en","score":10,"arr":[1,2]}}`)},
		{id: "n2", created: 200, updated: 4, doc: doc(`{"title":"hello","n":2,"ok":false,"tags":["b","c",1,true,null],"meta":{"lang":"fr","score":5}}`)},
		{id: "n3", created: 300, updated: 3, doc: doc(`{"title":"zeta","n":"2","ok":1,"tags":"a b","meta":{"lang":"en"},"nums":[10,20]}`)},
		{id: "n4", created: 400, updated: 2, doc: doc(`{"n":null,"tags":[],"meta":"en"}`)},
		{id: "n5", created: 500, updated: 1, doc: doc(`{"title":"Alpha","n":3.0,"ok":"true","nil":false,"tags":[["a"]],"meta":{"lang":"de","score":7.5,"arr":[3]}}`)},
		{id: "n6", created: 600, updated: 0, deleted: true, doc: doc(`{"title":"hello","n":2}`)},
	})
	return db
}

// TestExec_Operators pins each operator's semantics on the fixture.
func TestExec_Operators(t *testing.T) {
	db := fixture(t)
	cases := []struct {
		where string
		want  []string
	}{
		{`{}`, []string{"n1", "n2", "n3", "n4", "n5"}},
		// $eq: same JSON type and value; implicit form; deleted rows never match.
		{`{"title":"hello"}`, []string{"n2"}},
		{`{"title":{"$eq":"hello"}}`, []string{"n2"}},
		{`{"n":2}`, []string{"n2"}},
		{`{"n":"2"}`, []string{"n3"}},
		{`{"n":3}`, []string{"n5"}},
		{`{"ok":true}`, []string{"n1"}},
		{`{"ok":1}`, []string{"n3"}},
		{`{"ok":false}`, []string{"n2"}},
		{`{"nil":null}`, []string{"n1"}},
		{`{"n":null}`, []string{"n4"}},
		// $ne is NOT $eq: absent fields match.
		{`{"n":{"$ne":2}}`, []string{"n1", "n3", "n4", "n5"}},
		{`{"title":{"$ne":"hello"}}`, []string{"n1", "n3", "n4", "n5"}},
		{`{"nil":{"$ne":null}}`, []string{"n2", "n3", "n4", "n5"}},
		// ranges: numbers with numbers, strings with strings (bytewise).
		{`{"n":{"$gt":1}}`, []string{"n2", "n5"}},
		{`{"n":{"$gte":1}}`, []string{"n1", "n2", "n5"}},
		{`{"n":{"$lt":2}}`, []string{"n1"}},
		{`{"n":{"$lte":2}}`, []string{"n1", "n2"}},
		{`{"n":{"$gte":"2"}}`, []string{"n3"}},
		{`{"title":{"$gt":"hello"}}`, []string{"n3"}},
		{`{"title":{"$lt":"a"}}`, []string{"n1", "n5"}},
		{`{"f":{"$gt":1.25,"$lt":1.75}}`, []string{"n1"}},
		{`{"ok":{"$gte":1}}`, []string{"n3"}},
		{`{"meta.score":{"$gte":7.5}}`, []string{"n1", "n5"}},
		// $in / $nin: $eq per element; $nin matches absent.
		{`{"meta.lang":{"$in":["en","de"]}}`, []string{"n1", "n3", "n5"}},
		{`{"n":{"$in":[1,"2",null]}}`, []string{"n1", "n3", "n4"}},
		{`{"ok":{"$in":[true,false]}}`, []string{"n1", "n2"}},
		{`{"n":{"$in":[]}}`, nil},
		{`{"n":{"$nin":[1,"2"]}}`, []string{"n2", "n4", "n5"}},
		{`{"title":{"$nin":["hello"]}}`, []string{"n1", "n3", "n4", "n5"}},
		{`{"n":{"$nin":[]}}`, []string{"n1", "n2", "n3", "n4", "n5"}},
		// $exists: present (null included) or absent.
		{`{"nil":{"$exists":true}}`, []string{"n1", "n5"}},
		{`{"nil":{"$exists":false}}`, []string{"n2", "n3", "n4"}},
		{`{"meta.score":{"$exists":false}}`, []string{"n3", "n4"}},
		{`{"n":{"$exists":true}}`, []string{"n1", "n2", "n3", "n4", "n5"}},
		// $contains: array membership ($eq per element) or substring.
		{`{"tags":{"$contains":"a"}}`, []string{"n1", "n3"}},
		{`{"tags":{"$contains":1}}`, []string{"n2"}},
		{`{"tags":{"$contains":true}}`, []string{"n2"}},
		{`{"tags":{"$contains":null}}`, []string{"n2"}},
		{`{"title":{"$contains":"ell"}}`, []string{"n1", "n2"}},
		{`{"title":{"$contains":"ELL"}}`, nil},
		{`{"title":{"$contains":""}}`, []string{"n1", "n2", "n3", "n5"}},
		{`{"meta":{"$contains":"en"}}`, []string{"n4"}},
		// dotted paths and array indexes.
		{`{"meta.arr.0":1}`, []string{"n1"}},
		{`{"meta.arr.1":{"$exists":true}}`, []string{"n1"}},
		{`{"nums.1":20}`, []string{"n3"}},
		{`{"meta.lang.x":{"$exists":true}}`, nil},
		// logic.
		{`{"$or":[{"n":1},{"title":"zeta"}]}`, []string{"n1", "n3"}},
		{`{"$and":[{"meta.lang":"en"},{"$not":{"title":{"$contains":"World"}}}]}`, []string{"n3"}},
		{`{"$not":{"ok":true}}`, []string{"n2", "n3", "n4", "n5"}},
		{`{"n":{"$not":{"$gt":1}}}`, []string{"n1", "n3", "n4"}},
		{`{"n":{"$gt":1,"$lt":3}}`, []string{"n2"}},
		{`{"meta.lang":"en","n":1}`, []string{"n1"}},
		{`{"$or":[{"$and":[{"n":{"$gte":2}},{"$not":{"n":3}}]},{"$not":{"$or":[{"title":{"$exists":true}},{"n":null}]}}]}`, []string{"n2"}},
		// pseudo-fields are the columns; "$.id" is the document's own id.
		{`{"id":"n2"}`, []string{"n2"}},
		{`{"id":{"$in":["n1","n5","zz",5]}}`, []string{"n1", "n5"}},
		{`{"id":{"$gt":"n3"}}`, []string{"n4", "n5"}},
		{`{"id":{"$contains":"3"}}`, []string{"n3"}},
		{`{"id":3}`, nil},
		{`{"id":{"$exists":false}}`, nil},
		{`{"id":{"$ne":"n1"}}`, []string{"n2", "n3", "n4", "n5"}},
		{`{"createdAt":{"$gte":300}}`, []string{"n3", "n4", "n5"}},
		{`{"created_at":300}`, []string{"n3"}},
		{`{"createdAt":"300"}`, nil},
		{`{"updatedAt":{"$nin":[1,2]}}`, []string{"n1", "n2", "n3"}},
		{`{"$.id":"x1"}`, []string{"n1"}},
		{`{"id":"x1"}`, nil},
	}
	for _, c := range cases {
		q := mustParse(t, `{"from":"`+testSchema+`","where":`+c.where+`}`)
		got := ids(t, db, q)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("where %s: got %v, want %v", c.where, got, c.want)
		}
	}
}

// TestExec_Order pins the sort order of mixed JSON types.
func TestExec_Order(t *testing.T) {
	db := fixture(t)
	cases := []struct {
		order string
		want  []string
	}{
		{`[{"field":"n"}]`, []string{"n4", "n1", "n2", "n5", "n3"}},
		{`[{"field":"n","direction":"desc"}]`, []string{"n3", "n5", "n2", "n1", "n4"}},
		{`[{"field":"title","direction":"asc"}]`, []string{"n4", "n5", "n1", "n2", "n3"}},
		{`[{"field":"ok"}]`, []string{"n4", "n2", "n1", "n3", "n5"}},
		{`[{"field":"ok","direction":"desc"}]`, []string{"n5", "n3", "n1", "n2", "n4"}},
		{`[{"field":"meta.lang"},{"field":"createdAt","direction":"desc"}]`, []string{"n4", "n5", "n3", "n1", "n2"}},
		{`[{"field":"updatedAt"}]`, []string{"n5", "n4", "n3", "n2", "n1"}},
		{`[{"field":"id","direction":"desc"}]`, []string{"n5", "n4", "n3", "n2", "n1"}},
	}
	for _, c := range cases {
		q := mustParse(t, `{"from":"x","order":`+c.order+`}`)
		if got := ids(t, db, q); !slices.Equal(got, c.want) {
			t.Errorf("order %s: got %v, want %v", c.order, got, c.want)
		}
	}
}

// TestExec_Select checks projections: JSON values keep their types, absent
// fields are omitted, pseudo-fields come from the columns.
func TestExec_Select(t *testing.T) {
	db := fixture(t)
	q := mustParse(t, `{"select":["title","meta.lang","ok","nil","missing","createdAt","tags","meta.arr.1","$.id"],"from":"x","where":{"id":"n1"}}`)
	res, err := Exec(context.Background(), db, q, testTarget, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"id": "n1", "title": "Hello World", "meta.lang": "en", "ok": true, "nil": nil,
		"createdAt": int64(100), "tags": []any{"a", "b"}, "meta.arr.1": json.Number("2"), "$.id": "x1",
	}
	if len(res.Rows) != 1 || !reflect.DeepEqual(res.Rows[0], want) {
		t.Fatalf("got %#v\nwant %#v", res.Rows, want)
	}
	q = mustParse(t, `{"from":"x","where":{"id":"n3"}}`)
	res, err = Exec(context.Background(), db, q, testTarget, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]any{"id": "n3", "title": "zeta", "n": "2", "ok": json.Number("1"), "tags": "a b",
		"meta": map[string]any{"lang": "en"}, "nums": []any{json.Number("10"), json.Number("20")}}
	if !reflect.DeepEqual(res.Rows[0], want) {
		t.Fatalf("whole doc: got %#v\nwant %#v", res.Rows[0], want)
	}
}
