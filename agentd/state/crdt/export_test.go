package crdt

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
