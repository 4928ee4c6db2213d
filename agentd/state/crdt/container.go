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
