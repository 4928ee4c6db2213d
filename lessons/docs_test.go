package lessons

import (
	"os"
	"strings"
	"testing"
)

// Every refusal reason and rule name is spelled in docs/TRUST.md as the code
// spells it.
func TestDocs_TRUST(t *testing.T) {
	doc, err := os.ReadFile("../docs/TRUST.md")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ReasonStranger, ReasonRetracted, ReasonSiblingNotListed, ReasonSiblingNoOwner, ReasonLessonRefused, ReasonUnbound,
		strings.ReplaceAll(reasonOwnerUntrusted, "%s", "<npub>"), strings.ReplaceAll(reasonRuleDisabled, "%s", "<rule>"),
		strings.ReplaceAll(reasonInvalid, "%v", "<error>"), lessonPreamble}
	for _, r := range ruleOrder {
		want = append(want, "`"+string(r)+"`")
	}
	for _, s := range want {
		if !strings.Contains(string(doc), s) {
			t.Errorf("docs/TRUST.md does not contain %q", s)
		}
	}
}
