package relay

import (
	"encoding/json"
	"net/http"

	"github.com/nbd-wtf/go-nostr/nip11"

	"github.com/agentnode/agentnode/relay/policies"
)

// SupportedNIPs is every NIP the relay implements, each backed by a test in
// this package or in the interop suite:
//
//	1 basic protocol · 9 deletions (stay deleted) · 11 this document ·
//	22 comments (lesson comments validated) · 40 expiration · 42 AUTH (khatru) ·
//	45 COUNT (bounded) · 50 search over definitions, lessons, comments ·
//	70 protected events (khatru) · 77 negentropy sync (bounded: negentropy.go)
var SupportedNIPs = []int{1, 9, 11, 22, 40, 42, 45, 50, 70, 77}

// SoftwareURL identifies the relay software in NIP-11.
const SoftwareURL = "https://github.com/agentnode/agentnode"

// info builds the NIP-11 document from the configuration in force.
func (r *Relay) info() *nip11.RelayInformationDocument {
	lim := r.cfg.Limits
	doc := &nip11.RelayInformationDocument{
		Name:        r.cfg.Name,
		Description: r.cfg.Description,
		PubKey:      r.cfg.PubKey,
		Contact:     r.cfg.Contact,
		Software:    SoftwareURL,
		Version:     r.cfg.Version,
		Limitation:  limitation(lim),
	}
	if doc.Name == "" {
		doc.Name = "agentnode"
	}
	if doc.Description == "" {
		doc.Description = "agentnode: a node of the Nostr agent network (NIP-AE definitions, nudges, lessons, comments, profiles, owner claims; capability packages, heartbeats, evaluations; agents answer NIP-17 DMs)"
	}
	if doc.Version == "" {
		doc.Version = "dev"
	}
	for _, n := range SupportedNIPs {
		doc.AddSupportedNIP(n)
	}
	return doc
}

// limitation is NIP-11's limitation object of lim.
func limitation(lim Limits) *nip11.RelayLimitationDocument {
	return &nip11.RelayLimitationDocument{
		MaxMessageLength:    lim.MaxMessageBytes,
		MaxSubscriptions:    lim.MaxSubscriptions,
		MaxLimit:            lim.MaxLimit,
		DefaultLimit:        lim.DefaultLimit,
		MaxEventTags:        lim.MaxEventTags,
		MaxContentLength:    lim.MaxContentBytes,
		CreatedAtUpperLimit: int64(lim.MaxFutureSkew.Seconds()),
	}
}

// Operator is who runs the relay, as the NIP-11 document says it; empty
// fields keep the defaults (name "agentnode", the stock description, no
// pubkey, no contact).
type Operator struct {
	Name        string
	Description string
	PubKey      string // 64-hex
	Contact     string
}

// SetOperator sets the operator fields of the NIP-11 document. Call it
// before serving (it is not synchronised with requests).
func (r *Relay) SetOperator(op Operator) {
	r.cfg.Name, r.cfg.Description, r.cfg.PubKey, r.cfg.Contact = op.Name, op.Description, op.PubKey, op.Contact
	r.khatru.Relay.Info = r.info()
}

// infoDocument is the NIP-11 document as served: go-nostr's, with the
// limitation object extended by every other budget the relay enforces, so
// that a client can read all of them (NIP-11 lets a relay add fields).
//
// The operator's fields are left out when unset (they shadow go-nostr's,
// which are always written): "pubkey": "" is not a key, and clients that
// check the document (nak relay) refuse all of it for one.
type infoDocument struct {
	*nip11.RelayInformationDocument
	PubKey     string             `json:"pubkey,omitempty"`
	Contact    string             `json:"contact,omitempty"`
	Icon       string             `json:"icon,omitempty"`
	Banner     string             `json:"banner,omitempty"`
	Limitation limitationDocument `json:"limitation"`
}

type limitationDocument struct {
	*nip11.RelayLimitationDocument
	MaxTagValueLength    int            `json:"max_tag_value_length"`
	MaxTagValueByKind    map[string]int `json:"max_tag_value_length_by_kind"`
	MaxFilters           int            `json:"max_filters"`
	MaxFilterValues      int            `json:"max_filter_values"`
	MaxSearchWords       int            `json:"max_search_words"`
	MaxConcurrentQueries int            `json:"max_concurrent_queries"`
	MaxOutboundBytes     int            `json:"max_outbound_bytes"`
	MaxOutboundMessages  int            `json:"max_outbound_messages"`
	RequestsPerSecond    int            `json:"requests_per_second"`
	EventsPerSecond      int            `json:"events_per_second"`
	EventsBurst          int            `json:"events_burst"`
	MaxCount             int            `json:"max_count"`
	MaxConnections       int            `json:"max_connections"`        // websockets open at once (0: no bound)
	MaxConnectionsPerIP  int            `json:"max_connections_per_ip"` // websockets open at once from one address (0: no bound)
}

// serveNIP11 answers a request for the relay information document.
func (r *Relay) serveNIP11(w http.ResponseWriter, _ *http.Request) {
	lim := r.limits() // a reload may have changed them (reload.go)
	info := r.khatru.Relay.Info
	doc := infoDocument{RelayInformationDocument: info,
		PubKey: info.PubKey, Contact: info.Contact, Icon: info.Icon, Banner: info.Banner, Limitation: limitationDocument{
			RelayLimitationDocument: limitation(lim),
			MaxTagValueLength:       lim.MaxTagValueBytes,
			MaxTagValueByKind:       policies.AgentTagValueLimits(lim.MaxTagValueBytes).Advertised(),
			MaxFilters:              lim.MaxFilters,
			MaxFilterValues:         lim.MaxFilterValues,
			MaxSearchWords:          lim.MaxSearchWords,
			MaxConcurrentQueries:    lim.MaxConcurrentQueries,
			MaxOutboundBytes:        lim.MaxOutboundBytes,
			MaxOutboundMessages:     lim.MaxOutboundMessages,
			RequestsPerSecond:       max(lim.RequestsPerSecond, 0),
			EventsPerSecond:         max(lim.EventsPerSecond, 0),
			EventsBurst:             max(lim.EventsBurst, 0),
			MaxCount:                lim.MaxCount,
			MaxConnections:          max(lim.MaxConnections, 0),
			MaxConnectionsPerIP:     max(lim.MaxConnectionsPerIP, 0),
		}}
	w.Header().Set("Content-Type", "application/nostr+json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	json.NewEncoder(w).Encode(doc)
}
