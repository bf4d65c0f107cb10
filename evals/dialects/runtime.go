package dialects

import (
	"encoding/json"
	"fmt"

	"github.com/jevlab/jevlab/provider"
)

// The assistant-runtime's default limits (dialects.md §2).
const (
	runtimeMaxQuestions  = 32
	runtimeMaxStateBytes = 256 << 10
)

// assistantRuntime reads an assistant-runtime POST /api/decisions body:
// {state, profile, questions} with the native question shapes. The profile
// is the runtime's own and is kept as a note.
func (im *importer) assistantRuntime(data []byte) error {
	top, err := im.sourceObject(data)
	if err != nil {
		return err
	}
	if err := im.only(top, "an assistant-runtime /api/decisions body", "state", "profile", "questions"); err != nil {
		return err
	}
	if err := im.setState("state", top.get("state")); err != nil {
		return err
	}
	if pv := top.get("profile"); pv != nil && provider.KindOfJSON(pv) != 'n' {
		im.note("assistant-runtime profile %s is the runtime's own and is not sent to the provider; it is kept only in this note.", provider.Compact(pv))
	}
	qs := top.get("questions")
	if qs == nil {
		return im.fail("questions", "missing; the body needs at least one question")
	}
	qo, err := im.parseObject("questions", qs)
	if err != nil {
		return err
	}
	err = im.addQuestions(qo, func(path, _ string, raw json.RawMessage) (provider.Question, error) {
		var q provider.Question
		if err := q.UnmarshalJSON(raw); err != nil {
			return q, im.wrap(path, err)
		}
		return q, nil
	})
	if err != nil {
		return err
	}
	if n := len(im.questions); n > runtimeMaxQuestions {
		im.note("the body has %d questions; the assistant-runtime accepts at most %d by default.", n, runtimeMaxQuestions)
	}
	if n := len(im.state); n > runtimeMaxStateBytes {
		im.note("the state is %s serialized; the assistant-runtime accepts at most 256 KiB by default.", fmt.Sprintf("%d bytes", n))
	}
	return nil
}
