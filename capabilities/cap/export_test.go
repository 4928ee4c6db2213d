package cap

// ValidVersion reports whether v is a semantic version (tests).
func ValidVersion(v string) bool {
	_, ok := parseSemver(v)
	return ok
}
