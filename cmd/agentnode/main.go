package main
import (
 _ "github.com/fiatjaf/eventstore/lmdb"
 _ "github.com/fiatjaf/eventstore/bluge"
 _ "github.com/fiatjaf/khatru"
 _ "github.com/fiatjaf/khatru/policies"
 _ "github.com/nbd-wtf/go-nostr/nip19"
 _ "gopkg.in/yaml.v3"
)
func main(){}
