package dialects

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/jevlab/jevlab/provider"
)

// noetic reads a Noetic routeSwitch node, a decide node, or a bare
// DecideQuestions map.
func (im *importer) noetic(data []byte) error {
	top, err := im.sourceObject(data)
	if err != nil {
		return err
	}
	kv := top.get("kind")
	if kv == nil {
		return im.noeticQuestions(top, nil)
	}
	k, err := im.str("kind", kv)
	if err != nil {
		return err
	}
	switch k {
	case "routeSwitch":
		return im.noeticRouteSwitch(top)
	case "decide":
		return im.noeticDecide(top)
	}
	return im.fail("kind", "a Noetic %q node asks no questions; import a decide or routeSwitch node, or a DecideQuestions map", k)
}

func (im *importer) noeticRouteSwitch(node *object) error {
	if err := im.only(node, "a Noetic routeSwitch node", "kind", "id", "decide", "on", "minConfidence", "cases", "uncertain"); err != nil {
		return err
	}
	id, err := im.optString(node, "id")
	if err != nil {
		return err
	}
	dv := node.get("decide")
	if dv == nil {
		return im.fail("decide", "missing; a routeSwitch routes on the answers of its decide node")
	}
	d, err := im.parseObject("decide", dv)
	if err != nil {
		return err
	}
	if k, _ := im.optString(d, "kind"); k != "decide" {
		return im.fail("decide.kind", "must be \"decide\", not %q", k)
	}
	if err := im.noeticDecide(d); err != nil {
		return err
	}
	if id != "" {
		im.name = id
	}
	ov := node.get("on")
	if ov == nil {
		return im.fail("on", "missing; name the question whose outcome routes")
	}
	on, err := im.str("on", ov)
	if err != nil {
		return err
	}
	q, ok := im.questions.Get(on)
	if !ok {
		return im.fail("on", "names question %q, which the decide node does not ask (it asks %s)", on, strings.Join(im.questions.IDs(), ", "))
	}
	outcomes := outcomeLabels(q)
	var minConf string
	if mv := node.get("minConfidence"); mv != nil {
		p, err := im.probability("minConfidence", mv)
		if err != nil {
			return err
		}
		if q.Type == provider.Noul {
			// A System One noul answer has no confidence field, so the
			// setting can never apply; say so rather than drop it.
			minConf = fmt.Sprintf(", or its confidence is under %v: this cannot apply, because a System One noul answer has no confidence, so jevlab keeps no min_confidence for %q", p, on)
		} else {
			s := im.setting(on)
			s.MinConfidence = &p
			im.settings[on] = s
			minConf = fmt.Sprintf(", or its confidence is under %v: kept as min_confidence on %q", p, on)
		}
	}
	var routes []string
	if cv := node.get("cases"); cv != nil {
		cases, err := im.parseObject("cases", cv)
		if err != nil {
			return err
		}
		for _, c := range cases.fields {
			if !slices.Contains(outcomes, c.Key) {
				return im.fail(join("cases", c.Key), "is not an outcome of question %q (its outcomes are %s)", on, strings.Join(outcomes, ", "))
			}
			routes = append(routes, fmt.Sprintf("%s → %s", c.Key, describeNode(c.Value)))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "routeSwitch %q routes on the outcome of question %q", id, on)
	if len(routes) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(routes, "; "))
	}
	if uv := node.get("uncertain"); uv != nil {
		fmt.Fprintf(&b, "; uncertain (the answer is refused%s) → %s", minConf, describeNode(uv))
	} else if minConf != "" {
		fmt.Fprintf(&b, "; the uncertain branch (the answer is refused%s) has no node", minConf)
	}
	b.WriteString(". Workflow routing is not part of a question set and is never sent to the provider; it is kept only in this note.")
	im.note("%s", b.String())
	return nil
}

func (im *importer) noeticDecide(node *object) error {
	if err := im.only(node, "a Noetic decide node", "kind", "id", "model", "instructions", "questions", "samples"); err != nil {
		return err
	}
	id, err := im.optString(node, "id")
	if err != nil {
		return err
	}
	im.name = id
	if mv := node.get("model"); mv != nil {
		if im.model, err = im.str(join(node.path, "model"), mv); err != nil {
			return err
		}
	}
	var frame json.RawMessage
	if iv := node.get("instructions"); iv != nil && provider.KindOfJSON(iv) != 'n' {
		if frame, err = im.textSlot(join(node.path, "instructions"), iv); err != nil {
			return err
		}
	}
	if sv := node.get("samples"); sv != nil {
		im.note("decide node %q sets samples %s; samples apply only when a chat model estimates the probabilities, not to a native System One decision model, so it has no effect here.", id, provider.Compact(sv))
	}
	qv := node.get("questions")
	if qv == nil {
		return im.fail(join(node.path, "questions"), "missing; a decide node needs at least one question")
	}
	qs, err := im.parseObject(join(node.path, "questions"), qv)
	if err != nil {
		return err
	}
	if err := im.noeticQuestions(qs, frame); err != nil {
		return err
	}
	if frame != nil {
		im.note("decide node %q has its own instructions (%s), which frame every question; the System One API has no slot for them, so each question's instructions here is {\"context\": <the node's instructions>, \"question\": <the question's own instructions>}.",
			id, shorten(provider.Text(frame), 80))
	}
	return nil
}

// noeticQuestions reads a DecideQuestions map. frame, when set, is the decide
// node's instructions, carried into every question.
func (im *importer) noeticQuestions(qs *object, frame json.RawMessage) error {
	if len(qs.fields) == 0 {
		return im.fail(qs.path, "no questions; a System One request needs at least one")
	}
	return im.addQuestions(qs, func(path, id string, raw json.RawMessage) (provider.Question, error) {
		q, err := im.noeticQuestion(path, id, raw)
		if err == nil && frame != nil {
			q.Instructions = framed(frame, q.Instructions)
		}
		return q, err
	})
}

// framed builds {"context": frame, "question": own} (question omitted when
// the question has no instructions of its own).
func framed(frame, own json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"context":`)
	b.Write(frame)
	if own != nil && provider.KindOfJSON(own) != 'n' {
		b.WriteString(`,"question":`)
		b.Write(own)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func (im *importer) noeticQuestion(path, id string, raw json.RawMessage) (provider.Question, error) {
	var q provider.Question
	o, err := im.parseObject(path, raw)
	if err != nil {
		return q, err
	}
	t, err := im.questionType(path, o)
	if err != nil {
		return q, err
	}
	if iv := o.get("instructions"); iv != nil && provider.KindOfJSON(iv) != 'n' {
		if q.Instructions, err = im.textSlot(join(path, "instructions"), iv); err != nil {
			return q, err
		}
	}
	switch t {
	case "choice":
		q.Type = provider.Choice
		if err := im.only(o, "a Noetic choice question", "type", "instructions", "choices"); err != nil {
			return q, err
		}
		cv := o.get("choices")
		if cv == nil {
			return q, im.fail(join(path, "choices"), "missing; a choice needs its choices (an array of labels or a record label → description)")
		}
		if q.Options, err = im.noeticChoices(join(path, "choices"), cv); err != nil {
			return q, err
		}
		if len(q.Options) == 1 {
			return q, im.fail(join(path, "choices"), "has a single value (%q); Noetic allows that, but a System One server needs at least two options; add one (for example \"other\") and import again", q.Options[0].Label)
		}
	case "score":
		q.Type = provider.Score
		if err := im.only(o, "a Noetic score question", "type", "instructions", "levels"); err != nil {
			return q, err
		}
		lv := o.get("levels")
		if lv == nil {
			return q, im.fail(join(path, "levels"), "missing; a score needs 2 to 10 levels, lowest first")
		}
		if q.Levels, err = im.noeticLevels(join(path, "levels"), lv); err != nil {
			return q, err
		}
	case "boolean":
		q.Type = provider.Noul
		if err := im.only(o, "a Noetic boolean question", "type", "instructions", "criteria", "threshold"); err != nil {
			return q, err
		}
		if cv := o.get("criteria"); cv != nil && provider.KindOfJSON(cv) != 'n' {
			if q.Options, err = im.options(join(path, "criteria"), cv); err != nil {
				return q, err
			}
		}
		if q.Instructions == nil && !hasDescription(q.Options) {
			return q, im.fail(path, "a Noetic boolean needs instructions or a criteria description, and this one has neither")
		}
		if tv := o.get("threshold"); tv != nil {
			p, err := im.probability(join(path, "threshold"), tv)
			if err != nil {
				return q, err
			}
			s := im.setting(id)
			s.Threshold = &p
			im.settings[id] = s
		}
	case "noul":
		return q, im.fail(join(path, "type"), `"noul" is the System One name; Noetic calls it "boolean" (or import this file with --from assistant-runtime)`)
	default:
		return q, im.fail(join(path, "type"), "%q is not a Noetic question type; use boolean, choice or score", t)
	}
	return q, nil
}

// noeticChoices reads choices: an array of labels (descriptions null) or a
// record label → description, order kept; values must be unique.
func (im *importer) noeticChoices(path string, v json.RawMessage) ([]provider.Option, error) {
	switch provider.KindOfJSON(v) {
	case 'o':
		return im.options(path, v)
	case 'a':
		var raw []json.RawMessage
		if err := json.Unmarshal(v, &raw); err != nil {
			return nil, im.fail(path, "invalid JSON: %v", err)
		}
		seen := make(map[string]bool, len(raw))
		opts := make([]provider.Option, 0, len(raw))
		for i, r := range raw {
			label, err := im.str(fmt.Sprintf("%s[%d]", path, i), r)
			if err != nil {
				return nil, err
			}
			if seen[label] {
				return nil, im.fail(fmt.Sprintf("%s[%d]", path, i), "duplicate choice %q; Noetic choices are unique", label)
			}
			seen[label] = true
			opts = append(opts, provider.Option{Label: label, Description: json.RawMessage("null")})
		}
		return opts, nil
	}
	return nil, im.fail(path, "must be an array of labels or a record label → description, not a %s", provider.KindOfJSON(v))
}

// noeticLevels reads levels: strings, or {label, description} objects. A
// level with a description becomes a structured criteria entry that keeps
// both; a label alone stays a plain string.
func (im *importer) noeticLevels(path string, v json.RawMessage) ([]json.RawMessage, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return nil, im.fail(path, "must be an array of levels, lowest first, not a %s", provider.KindOfJSON(v))
	}
	out := make([]json.RawMessage, 0, len(raw))
	seen := make(map[string]bool, len(raw))
	for i, r := range raw {
		lp := fmt.Sprintf("%s[%d]", path, i)
		var label string
		switch provider.KindOfJSON(r) {
		case 's':
			label, _ = im.str(lp, r)
			out = append(out, provider.Compact(r))
		case 'o':
			lo, err := im.parseObject(lp, r)
			if err != nil {
				return nil, err
			}
			if err := im.only(lo, "a Noetic level", "label", "description"); err != nil {
				return nil, err
			}
			lv := lo.get("label")
			if lv == nil {
				return nil, im.fail(join(lp, "label"), "missing; every Noetic level has a label")
			}
			if label, err = im.str(join(lp, "label"), lv); err != nil {
				return nil, err
			}
			dv := lo.get("description")
			if dv == nil || provider.KindOfJSON(dv) == 'n' {
				out = append(out, provider.String(label))
				break
			}
			d, err := im.textSlot(join(lp, "description"), dv)
			if err != nil {
				return nil, err
			}
			var b bytes.Buffer
			b.WriteString(`{"label":`)
			b.Write(provider.String(label))
			b.WriteString(`,"description":`)
			b.Write(d)
			b.WriteByte('}')
			out = append(out, b.Bytes())
		default:
			return nil, im.fail(lp, "must be a label or {label, description}, not a %s", provider.KindOfJSON(r))
		}
		if label == "" {
			return nil, im.fail(lp, "empty level label")
		}
		if seen[label] {
			return nil, im.fail(lp, "duplicate level label %q; Noetic level labels are unique", label)
		}
		seen[label] = true
	}
	return out, nil
}

func (im *importer) optString(o *object, key string) (string, error) {
	v := o.get(key)
	if v == nil || provider.KindOfJSON(v) == 'n' {
		return "", nil
	}
	return im.str(join(o.path, key), v)
}

func hasDescription(opts []provider.Option) bool {
	for _, o := range opts {
		if k := provider.KindOfJSON(o.Description); k != 'n' && k != 0 && provider.Text(o.Description) != "" {
			return true
		}
	}
	return false
}

// outcomeLabels lists the outcomes a routeSwitch can route on: choice
// labels, true/false, or score level labels.
func outcomeLabels(q *provider.Question) []string {
	switch q.Type {
	case provider.Choice:
		out := make([]string, len(q.Options))
		for i, o := range q.Options {
			out[i] = o.Label
		}
		return out
	case provider.Noul:
		return []string{"true", "false"}
	case provider.Score:
		out := make([]string, len(q.Levels))
		for i, l := range q.Levels {
			out[i] = LevelLabel(l)
		}
		return out
	}
	return nil
}

// LevelLabel is the text jevlab shows for a score level: the string itself,
// or the "label" of a structured {label, description} entry (as Noetic
// levels are imported), else the compact JSON.
func LevelLabel(level json.RawMessage) string {
	if provider.KindOfJSON(level) == 'o' {
		var l struct {
			Label *string `json:"label"`
		}
		if json.Unmarshal(level, &l) == nil && l.Label != nil {
			return *l.Label
		}
	}
	return provider.Text(level)
}

// describeNode renders a workflow node as `kind "id"` for notes.
func describeNode(v json.RawMessage) string {
	var n map[string]json.RawMessage
	if json.Unmarshal(v, &n) != nil {
		return string(provider.Compact(v))
	}
	var k, id string
	_ = json.Unmarshal(n["kind"], &k)
	_ = json.Unmarshal(n["id"], &id)
	if k == "" && id == "" {
		return string(provider.Compact(v))
	}
	if id == "" {
		return k
	}
	keys := make([]string, 0, len(n))
	for key := range n {
		if key != "kind" && key != "id" {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	s := fmt.Sprintf("%s %q", k, id)
	if len(keys) > 0 {
		s += " (with " + strings.Join(keys, ", ") + ")"
	}
	return s
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q", string(r[:n-1])+"…")
}
