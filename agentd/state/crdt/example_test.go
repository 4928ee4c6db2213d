package crdt_test

import (
	"encoding/json"
	"fmt"

	"github.com/agentnode/agentnode/agentd/state/crdt"
)

// Two replicas edit one text concurrently and exchange ops as JSON.
func Example() {
	alice, bob := crdt.NewRGAText(), crdt.NewRGAText()
	alice.Bind(crdt.NewHLC("alice", nil))
	bob.Bind(crdt.NewHLC("bob", nil))

	base := alice.Insert(0, "hello")
	apply(bob, base)

	fromAlice := alice.Insert(5, " world")
	fromBob := bob.Delete(0, 1)
	fromBob = append(fromBob, bob.Insert(0, "J")...)

	apply(alice, fromBob)
	apply(bob, fromAlice)
	fmt.Println(alice.String(), "|", bob.String())
	// Output: Jello world | Jello world
}

// apply ships ops through JSON, as they travel in events.
func apply(doc crdt.CRDT, ops []crdt.Op) {
	b, _ := json.Marshal(ops)
	var in []crdt.Op
	_ = json.Unmarshal(b, &in)
	for _, op := range in {
		if err := doc.Apply(op); err != nil {
			panic(err)
		}
	}
}

// An object container: fields default to lww_register unless the schema
// declares another x-crdt; concurrent edits of different fields all land.
func ExampleNewObject() {
	settings, _ := crdt.NewObject(map[string]string{"tags": "grow_only_set"})
	settings.Bind(crdt.NewHLC("agent-1", nil))

	settings.Set("language", "en")
	settings.Update("tags", "", func(c crdt.CRDT) ([]crdt.Op, error) {
		op, err := c.(*crdt.GrowOnlySet).Add("beta")
		return []crdt.Op{op}, err
	})
	out, _ := json.Marshal(settings.Value())
	fmt.Println(string(out))
	// Output: {"language":"en","tags":["beta"]}
}

func ExampleNew() {
	_, err := crdt.New("yjs_map")
	fmt.Println(err != nil)
	log, _ := crdt.New("append_only")
	fmt.Println(log.Type())
	// Output:
	// true
	// log_rga
}
