package blossom

import "errors"

// Errors of the store and the client; the server turns them into HTTP
// statuses with an X-Reason header.
var (
	// ErrNotFound: no such blob (or the uploader holds no such blob).
	ErrNotFound = errors.New("blossom: blob not found")
	// ErrTooLarge: the blob is over the size bound.
	ErrTooLarge = errors.New("blossom: blob too large")
	// ErrQuota: the uploader's or the store's quota would be exceeded.
	ErrQuota = errors.New("blossom: quota exceeded")
	// ErrHashMismatch: the bytes do not hash to the expected SHA-256.
	ErrHashMismatch = errors.New("blossom: sha256 mismatch")
	// ErrBadHash: not a 64-hex SHA-256.
	ErrBadHash = errors.New("blossom: not a 64-hex sha256")
	// ErrAuth: a missing, malformed or unfit authorization event.
	ErrAuth = errors.New("blossom: authorization")
)
