package asmql

// Query is the ASM-QL AST:
//
//	{"select":[...], "from":"<schema uri>", "where":{...},
//	 "order":[{"field":"f","direction":"asc|desc"}], "limit":N, "cursor":"opaque"}
//
// ParseLimits builds one from JSON; callers may also build one in Go. Exec
// validates it either way.
type Query struct {
	// Select lists the fields to return; empty returns whole documents.
	Select []string
	// From is the schema URI. It takes part in the cursor's shape hash; the
	// caller turns it into Target (table and base predicate).
	From string
	// Where filters documents; nil matches all.
	Where Expr
	// Order sorts the result; id is always the final tiebreaker.
	Order []Order
	// Limit is the page size; 0 means Limits.DefaultLimit.
	Limit int
	// Cursor continues a previous page (Result.NextCursor).
	Cursor string
}

// Order is one sort key.
type Order struct {
	Field     string
	Direction string // "asc" (default when empty) or "desc"
}

// Expr is a where-expression: And, Or, Not or Cmp.
type Expr interface{ expr() }

// And matches when every operand matches. It must not be empty.
type And []Expr

// Or matches when any operand matches. It must not be empty.
type Or []Expr

// Not matches when X does not match (documents where X's fields are absent
// included).
type Not struct{ X Expr }

// Cmp compares one field with a value.
//
// Value is a scalar (nil, bool, string, or a number: int, int64, float64,
// json.Number, ...) for $eq $ne $gt $gte $lt $lte $contains; a []any of
// scalars for $in and $nin; a bool for $exists.
type Cmp struct {
	Field string
	Op    Op
	Value any
}

func (And) expr() {}
func (Or) expr()  {}
func (Not) expr() {}
func (Cmp) expr() {}

// Op is a field operator.
type Op string

// Field operators. See docs/ASMQL.md for their exact semantics.
const (
	OpEq       Op = "$eq"
	OpNe       Op = "$ne"
	OpGt       Op = "$gt"
	OpGte      Op = "$gte"
	OpLt       Op = "$lt"
	OpLte      Op = "$lte"
	OpIn       Op = "$in"
	OpNin      Op = "$nin"
	OpExists   Op = "$exists"
	OpContains Op = "$contains"
)

// Logical operator keys.
const (
	keyAnd = "$and"
	keyOr  = "$or"
	keyNot = "$not"
)

// fieldOps is the set of field operators.
var fieldOps = map[Op]bool{
	OpEq: true, OpNe: true, OpGt: true, OpGte: true, OpLt: true, OpLte: true,
	OpIn: true, OpNin: true, OpExists: true, OpContains: true,
}
