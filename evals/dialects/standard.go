package dialects

import (
	"encoding/json"

	"github.com/jevlab/jevlab/provider"
)

// standardAgents reads a Standard Agents DecisionQuestions request:
// {model, context, questions} with choice.options, score.levels and boolean.
func (im *importer) standardAgents(data []byte) error {
	top, err := im.sourceObject(data)
	if err != nil {
		return err
	}
	if err := im.only(top, "a DecisionQuestions request", "model", "context", "questions"); err != nil {
		return err
	}
	if v := top.get("model"); v != nil {
		if im.model, err = im.str("model", v); err != nil {
			return err
		}
	}
	if err := im.setState("context", top.get("context")); err != nil {
		return err
	}
	qs := top.get("questions")
	if qs == nil {
		return im.fail("questions", "missing; a DecisionQuestions request needs at least one question")
	}
	qo, err := im.parseObject("questions", qs)
	if err != nil {
		return err
	}
	return im.addQuestions(qo, func(path, _ string, raw json.RawMessage) (provider.Question, error) {
		return im.standardQuestion(path, raw)
	})
}

func (im *importer) standardQuestion(path string, raw json.RawMessage) (provider.Question, error) {
	var q provider.Question
	o, err := im.parseObject(path, raw)
	if err != nil {
		return q, err
	}
	t, err := im.questionType(path, o)
	if err != nil {
		return q, err
	}
	iv := o.get("instructions")
	if iv == nil || provider.KindOfJSON(iv) == 'n' {
		return q, im.fail(join(path, "instructions"), "missing; the Standard Agents spec requires instructions for every question")
	}
	if q.Instructions, err = im.textSlot(join(path, "instructions"), iv); err != nil {
		return q, err
	}
	switch t {
	case "choice":
		q.Type = provider.Choice
		if err := im.only(o, "a Standard Agents choice question", "type", "instructions", "options"); err != nil {
			return q, err
		}
		ov := o.get("options")
		if ov == nil {
			return q, im.fail(join(path, "options"), "missing; a choice needs an options object mapping each label to a description (or null)")
		}
		if q.Options, err = im.options(join(path, "options"), ov); err != nil {
			return q, err
		}
	case "score":
		q.Type = provider.Score
		if err := im.only(o, "a Standard Agents score question", "type", "instructions", "levels"); err != nil {
			return q, err
		}
		lv := o.get("levels")
		if lv == nil {
			return q, im.fail(join(path, "levels"), "missing; a score needs a levels array, lowest first")
		}
		if q.Levels, err = im.levels(join(path, "levels"), lv); err != nil {
			return q, err
		}
	case "boolean":
		q.Type = provider.Noul
		if err := im.only(o, "a Standard Agents boolean question", "type", "instructions", "criteria"); err != nil {
			return q, err
		}
		if cv := o.get("criteria"); cv != nil && provider.KindOfJSON(cv) != 'n' {
			if q.Options, err = im.options(join(path, "criteria"), cv); err != nil {
				return q, err
			}
		}
	case "noul":
		return q, im.fail(join(path, "type"), `"noul" is the System One name; the Standard Agents spec calls it "boolean" (or import this file with --from assistant-runtime)`)
	default:
		return q, im.fail(join(path, "type"), "%q is not a Standard Agents question type; use boolean, choice or score", t)
	}
	return q, nil
}
