package acp

import (
	"errors"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// compileProblem turns a compile error into one line and the JSON pointer
// of the schema part at fault ("" when unknown). jsonschema reports a
// metaschema failure as a tree; the first leaf is the specific reason.
func compileProblem(err error) (ptr, msg string) {
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if !errors.As(err, &sve) || !errors.As(sve.Err, &ve) {
		return "", oneLine(err.Error())
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	ptr = "/" + strings.Join(ve.InstanceLocation, "/")
	if len(ve.InstanceLocation) == 0 {
		ptr = ""
	}
	return ptr, "at " + cmpOr(ptr, "/") + ": " + ve.ErrorKind.LocalizedString(printer)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// oneLine folds a multi-line message.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
