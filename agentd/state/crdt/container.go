package crdt

import "fmt"

// Container kinds of x-asm.container (NIP-8).
const (
	ContainerObject = "object" // fixed record: an or_map with a CRDT per field
	ContainerMap    = "map"    // arbitrary key -> value: or_map
	ContainerList   = "list"   // ordered sequence: rga_list
	ContainerLog    = "log"    // append-only stream: log_rga
)

var containerDefaults = map[string]string{
	ContainerObject: TypeORMap,
	ContainerMap:    TypeORMap,
	ContainerList:   TypeRGAList,
	ContainerLog:    TypeLogRGA,
}

// DefaultCRDT returns the CRDT a container kind uses when the schema names
// none: object and map -> or_map, list -> rga_list, log -> log_rga.
func DefaultCRDT(container string) (string, error) {
	name, ok := containerDefaults[container]
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrUnknownContainer, container)
	}
	return name, nil
}

// NewContainer returns the CRDT for a container kind. crdt is the schema's
// x-asm crdt ("" for the default). fields gives an object's per-field x-crdt
// (undeclared fields are lww_register); it is ignored for other kinds.
func NewContainer(container, crdt string, fields map[string]string) (CRDT, error) {
	def, err := DefaultCRDT(container)
	if err != nil {
		return nil, err
	}
	if crdt == "" {
		crdt = def
	}
	if container == ContainerObject && crdt == TypeORMap {
		return NewObject(fields)
	}
	return New(crdt)
}
