package questionset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jevlab/jevlab/internal/editdist"
	"github.com/jevlab/jevlab/internal/termsafe"
	"github.com/jevlab/jevlab/provider"
	yaml "go.yaml.in/yaml/v3"
)

// topFields are the fields a question-set file may have.
var topFields = []string{"name", "model", "state", "questions", "dataset", "split", "fixtures", "gates", "assets", "danger_zone"}

// questionFields are the fields a question may have.
var questionFields = []string{"type", "instructions", "criteria", "threshold", "min_confidence", "negation", "costs", "variants"}

// aliases maps words other dialects use to ours, for "did you mean".
var aliases = map[string]string{
	"options": "criteria", "choices": "criteria", "levels": "criteria",
	"minconfidence": "min_confidence", "min-confidence": "min_confidence",
	"prompt": "instructions", "instruction": "instructions", "question": "instructions",
	"document": "state", "input": "state", "data": "dataset", "fixture": "fixtures",
}

// qpos remembers where a question's parts are in the file.
type qpos struct {
	key, value *yaml.Node
	fields     map[string][2]*yaml.Node // field → key, value
	entries    []pair                   // criteria entries (choice/noul)
	levels     []*yaml.Node             // criteria items (score)
}

type parser struct {
	file string
	errs ErrorList
	root *yaml.Node
	top  map[string][2]*yaml.Node
	qpos map[string]*qpos
	conv *converter // one budget for the whole document's alias expansion
}

func (p *parser) errAt(n *yaml.Node, question, field, msg string) {
	e := &Error{File: p.file, Question: question, Field: field, Msg: msg}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	p.errs = append(p.errs, e)
}

// posErr records a conversion error (a *posError, or anything else at
// fallback).
func (p *parser) posErr(err error, fallback *yaml.Node, question, field string) {
	var pe *posError
	if errors.As(err, &pe) {
		p.errAt(pe.node, question, field, pe.msg)
		return
	}
	p.errAt(fallback, question, field, err.Error())
}

var yamlLineRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// document parses data as JSON (a ".json" name, or content that is valid
// JSON starting with '{') or YAML.
func (p *parser) document(data []byte) (doc *yaml.Node, isJSON bool) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		p.errs = append(p.errs, &Error{File: p.file, Line: 1, Col: 1, Msg: "empty file; a question set needs questions:"})
		return nil, false
	}
	if strings.EqualFold(filepath.Ext(p.file), ".json") || (trimmed[0] == '{' && json.Valid(trimmed)) {
		doc, err := parseJSONDocument(data)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.File = p.file
				p.errs = append(p.errs, e)
			} else {
				p.errs = append(p.errs, &Error{File: p.file, Line: 1, Col: 1, Msg: err.Error()})
			}
			return nil, true
		}
		return doc, true
	}
	var n yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	err := safeDecode(dec, &n)
	if err == nil {
		var extra yaml.Node
		if err2 := safeDecode(dec, &extra); err2 != io.EOF {
			line := extra.Line
			if err2 != nil {
				line = 0
			}
			p.errs = append(p.errs, &Error{File: p.file, Line: line, Msg: "more than one YAML document; a question set is one document"})
			return nil, false
		}
	}
	if err == io.EOF {
		p.errs = append(p.errs, &Error{File: p.file, Line: 1, Col: 1, Msg: "empty file; a question set needs questions:"})
		return nil, false
	}
	if err != nil {
		e := &Error{File: p.file, Msg: err.Error()}
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Msg = "invalid YAML: " + m[2]
		}
		p.errs = append(p.errs, e)
		return nil, false
	}
	return &n, false
}

// safeDecode guards against panics in the YAML library on hostile input.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot parse this document (%v)", r)
		}
	}()
	return dec.Decode(n)
}

func (p *parser) parse(data []byte) *Set {
	doc, isJSON := p.document(data)
	if doc == nil {
		return nil
	}
	s := &Set{doc: doc, isJSON: isJSON}
	if len(doc.Content) == 0 {
		p.errAt(doc, "", "", "empty file; a question set needs questions:")
		return nil
	}
	root := doc.Content[0]
	for root.Kind == yaml.AliasNode && root.Alias != nil {
		root = root.Alias
	}
	p.root = root
	if root.Kind != yaml.MappingNode {
		p.errAt(root, "", "", "a question set is a mapping with name, model, state and questions, not "+kindWord(root))
		return nil
	}
	pairs, err := p.conv.pairs(root, 0)
	if err != nil {
		p.posErr(err, root, "", "")
		return nil
	}
	p.top = map[string][2]*yaml.Node{}
	if isBareQuestions(pairs) {
		// A bare question map ({"intent": {"type": "choice", …}}), as in
		// a wire request's "questions" or banking77's questions.json.
		s.bare = true
		p.top["questions"] = [2]*yaml.Node{root, root}
		p.questions(s, root)
		if len(p.errs) == 0 {
			p.validate(s)
		}
		return s
	}
	for _, kv := range pairs {
		p.top[kv.key] = [2]*yaml.Node{kv.keyNode, kv.value}
		switch kv.key {
		case "name":
			s.Name = p.text(kv.value, "", "name")
		case "model":
			s.Model = p.text(kv.value, "", "model")
			if s.Model == "" && p.isText(kv.value) {
				p.errAt(kv.value, "", "model", "is empty; name a model such as jev-latest, or remove the field")
			}
		case "state":
			raw, err := p.conv.toJSON(kv.value)
			if err != nil {
				p.posErr(err, kv.value, "", "state")
				continue
			}
			switch raw[0] {
			case '"', '{', '[':
				s.State = raw
			case 'n':
				// An empty `state:` means no working state.
			default:
				p.errAt(kv.value, "", "state", "must be a string, object or array, not a "+jsonKind(raw))
			}
		case "questions":
			p.questions(s, kv.value)
		case "dataset":
			if deref(kv.value).Kind == yaml.MappingNode {
				p.datasetMapping(s, deref(kv.value))
			} else {
				s.Dataset = p.text(kv.value, "", "dataset")
				s.datasetAt = [2]int{deref(kv.value).Line, deref(kv.value).Column}
			}
		case "fixtures":
			p.fixtures(s, kv.value)
		case "split":
			p.split(s, kv.value)
		case "assets": // assets.go
			p.readAssets(s, kv.value)
		case "danger_zone":
			p.readDangerZone(s, kv.value)
		case "gates":
			// parsed after the questions, which it refers to
		default:
			p.unknown(kv.keyNode, "", kv.key, topFields, "a question set has "+listWords(topFields))
		}
	}
	if _, ok := p.top["questions"]; !ok {
		p.errAt(root, "", "questions", "missing; a question set needs at least one question")
	}
	if g, ok := p.top["gates"]; ok {
		p.gates(s, g[1])
	}
	if len(p.errs) == 0 {
		p.validate(s)
	}
	return s
}

// validate runs the provider's own validation and maps each problem to
// its place in the file.
func (p *parser) validate(s *Set) {
	if s.HasVariants() {
		// A derived id (queue~v2) must never be a real id.
		for _, e := range s.Questions {
			if strings.Contains(e.ID, VariantSep) {
				var n *yaml.Node
				if qp, ok := p.qpos[e.ID]; ok {
					n = qp.key
				}
				p.errAt(n, e.ID, "", fmt.Sprintf("a question id cannot contain %q in a set with variants: jevlab asks variant v2 of queue as %q; rename the question", VariantSep, VariantID("queue", "v2")))
			}
		}
		if len(p.errs) > 0 {
			return
		}
	}
	req := s.RequestWith(nil, s.AllVariants())
	if req.State == nil {
		req.State = json.RawMessage(`""`) // the working state is optional
	}
	req.DangerZone = validationDangerZone(s) // assets.go
	err := req.Validate()
	var ve *provider.ValidationError
	if !errors.As(err, &ve) {
		return
	}
	for _, prob := range ve.Problems {
		var qe *provider.QuestionError
		var fe *provider.FieldError
		switch {
		case errors.As(prob, &qe):
			field, msg := "", qe.Err.Error()
			if errors.As(qe.Err, &fe) {
				field, msg = fe.Field, fe.Msg
			}
			n := p.locate(qe.ID, field)
			if label, ok := strings.CutPrefix(field, "criteria."); ok && needsQuote(label) {
				field = "criteria." + strconv.Quote(label)
			}
			qid := qe.ID
			if base, name, ok := SplitVariantID(qe.ID); ok {
				qid = base
				field = strings.TrimSuffix("variants."+name+"."+field, ".")
			}
			p.errAt(n, qid, field, msg)
		case errors.As(prob, &fe):
			n := p.root
			if kv, ok := p.top[fe.Field]; ok {
				n = kv[1]
			}
			p.errAt(n, "", fe.Field, fe.Msg)
		default:
			p.errAt(p.root, "", "", prob.Error())
		}
	}
}

// locate finds the node a provider field path refers to.
func (p *parser) locate(id, field string) *yaml.Node {
	qp, ok := p.qpos[id]
	if !ok {
		return p.root
	}
	if field == "" || field == "id" {
		return qp.key
	}
	if kv, ok := qp.fields[field]; ok {
		if field == "criteria" {
			return kv[0] // "has 1 option(s)" is about the field as a whole
		}
		return kv[1]
	}
	if label, ok := strings.CutPrefix(field, "criteria."); ok {
		for _, e := range qp.entries {
			if e.key == label {
				return e.keyNode
			}
		}
	}
	if rest, ok := strings.CutPrefix(field, "criteria["); ok {
		if i, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil {
			if i >= 0 && i < len(qp.levels) {
				return qp.levels[i]
			}
			if i >= 0 && i < len(qp.entries) {
				return qp.entries[i].keyNode
			}
		}
	}
	if kv, ok := qp.fields["criteria"]; ok && strings.HasPrefix(field, "criteria") {
		return kv[1]
	}
	return qp.key
}

func (p *parser) questions(s *Set, n *yaml.Node) {
	p.qpos = map[string]*qpos{}
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		p.errAt(n, "", "questions", "is empty; a question set needs at least one question")
		return
	}
	if n.Kind != yaml.MappingNode {
		p.errAt(n, "", "questions", "must be a mapping of question id to question, not "+kindWord(n))
		return
	}
	pairs, err := p.conv.pairs(n, 1)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) && strings.HasPrefix(pe.msg, "duplicate key ") {
			pe.msg = "duplicate question id " + strings.TrimPrefix(pe.msg, "duplicate key ")
		}
		p.posErr(err, n, "", "questions")
		return
	}
	if len(pairs) == 0 {
		p.errAt(n, "", "questions", "is empty; a question set needs at least one question")
		return
	}
	for _, kv := range pairs {
		if kv.key == "" {
			p.errAt(kv.keyNode, "", "questions", "a question id must not be empty")
			continue
		}
		if kv.key == "*" {
			p.errAt(kv.keyNode, "", "questions", `"*" cannot be a question id: it means every question in gates`)
			continue
		}
		q, ok := p.question(s, kv)
		if ok {
			s.Questions = append(s.Questions, provider.QuestionEntry{ID: kv.key, Question: q})
		}
	}
}

func (p *parser) question(s *Set, kv pair) (provider.Question, bool) {
	id := kv.key
	qp := &qpos{key: kv.keyNode, value: kv.value, fields: map[string][2]*yaml.Node{}}
	p.qpos[id] = qp
	var q provider.Question
	v := deref(kv.value)
	if v.Kind != yaml.MappingNode {
		p.errAt(v, id, "", "must be a mapping with type, instructions and criteria, not "+kindWord(v))
		return q, false
	}
	pairs, err := p.conv.pairs(v, 2)
	if err != nil {
		p.posErr(err, v, id, "")
		return q, false
	}
	before := len(p.errs)
	for _, f := range pairs {
		qp.fields[f.key] = [2]*yaml.Node{f.keyNode, f.value}
	}
	for _, f := range pairs {
		if !slices.Contains(questionFields, f.key) {
			p.unknown(f.keyNode, id, f.key, questionFields, "a question has "+listWords(questionFields))
		}
	}
	tkv, ok := qp.fields["type"]
	if !ok {
		p.errAt(qp.key, id, "type", "missing; use noul, choice, score or box")
		return q, false
	}
	t := p.text(tkv[1], id, "type")
	if len(p.errs) > before {
		return q, false
	}
	q.Type = provider.QuestionType(t)
	if !q.Type.Valid() {
		msg := fmt.Sprintf("%q is not a question type; use noul, choice, score or box", t)
		if sug := suggest(t, []string{"noul", "choice", "score", "box"}); sug != "" {
			msg = fmt.Sprintf("%q is not a question type; did you mean %s?", t, sug)
		}
		p.errAt(tkv[1], id, "type", msg)
		return q, false
	}
	if ikv, ok := qp.fields["instructions"]; ok {
		raw, err := p.conv.toJSON(ikv[1])
		if err != nil {
			p.posErr(err, ikv[1], id, "instructions")
		} else {
			q.Instructions = raw
		}
	}
	if ckv, ok := qp.fields["criteria"]; ok {
		p.criteria(&q, qp, id, ckv[1])
	}
	var st Settings
	if tkv, ok := qp.fields["threshold"]; ok {
		st.Threshold = p.unit(tkv[1], id, "threshold")
		if q.Type != provider.Noul {
			p.errAt(tkv[0], id, "threshold", fmt.Sprintf("only a noul has a threshold; a %s's decision is its top option", q.Type))
		}
	}
	if mkv, ok := qp.fields["min_confidence"]; ok {
		st.MinConfidence = p.unit(mkv[1], id, "min_confidence")
		if q.Type == provider.Noul {
			p.errAt(mkv[0], id, "min_confidence", "a noul has no confidence; use threshold instead")
		}
	}
	if nkv, ok := qp.fields["negation"]; ok {
		if q.Type != provider.Noul {
			p.errAt(nkv[0], id, "negation", fmt.Sprintf("only a noul has a negation (its negated wording, for jevlab probe --kind negation); a %s has none", q.Type))
		} else if raw, err := p.conv.toJSON(nkv[1]); err != nil {
			p.posErr(err, nkv[1], id, "negation")
		} else if string(raw) == "null" || string(raw) == `""` {
			p.errAt(nkv[1], id, "negation", "is empty; write the question's negated wording (e.g. \"Is this NOT a refund request?\") or remove the key")
		} else {
			st.Negation = raw
		}
	}
	if ckv, ok := qp.fields["costs"]; ok {
		st.Costs = p.costs(ckv, id, &q)
	}
	if !st.empty() {
		if s.Settings == nil {
			s.Settings = map[string]Settings{}
		}
		s.Settings[id] = st
	}
	if vkv, ok := qp.fields["variants"]; ok && len(p.errs) == before {
		p.variants(s, id, &q, vkv[1])
	}
	return q, len(p.errs) == before
}

// costs reads a noul's costs: {false_positive, false_negative, abstain}.
func (p *parser) costs(kv [2]*yaml.Node, id string, q *provider.Question) *Costs {
	t := q.Type
	if t == provider.Choice {
		return p.choiceCosts(kv, id, q)
	}
	if t != provider.Noul {
		p.errAt(kv[0], id, "costs", fmt.Sprintf("costs are for a noul's threshold (false_positive, false_negative, abstain) or a choice's options (matrix or false_choice, abstain); a %s has none", t))
		return nil
	}
	d := deref(kv[1])
	if d.Kind != yaml.MappingNode {
		p.errAt(d, id, "costs", "must be a mapping such as {false_positive: 5, false_negative: 1, abstain: 0.5}")
		return nil
	}
	pairs, err := mappingPairs(d, 3)
	if err != nil {
		p.posErr(err, d, id, "costs")
		return nil
	}
	c := &Costs{FalsePositive: -1, FalseNegative: -1}
	names := []string{"false_positive", "false_negative", "abstain"}
	for _, f := range pairs {
		field := "costs." + f.key
		if !slices.Contains(names, f.key) {
			p.unknown(f.keyNode, id, field, names, "costs are false_positive, false_negative and abstain")
			continue
		}
		x, ok := p.number(f.value, id, field)
		if !ok {
			continue
		}
		if x < 0 {
			p.errAt(f.value, id, field, fmt.Sprintf("%s: a cost must not be negative", formatFloat(x)))
			continue
		}
		switch f.key {
		case "false_positive":
			c.FalsePositive = x
		case "false_negative":
			c.FalseNegative = x
		case "abstain":
			c.Abstain = &x
		}
	}
	if c.FalsePositive < 0 || c.FalseNegative < 0 {
		p.errAt(d, id, "costs", "needs false_positive and false_negative")
		return nil
	}
	return c
}

// choiceCosts reads a choice's costs: {matrix: {TRUE: {DECIDED: cost}}}
// or {false_choice: {DECIDED: cost}}, with other (the cost of any wrong
// decision not listed) and abstain optional.
func (p *parser) choiceCosts(kv [2]*yaml.Node, id string, q *provider.Question) *Costs {
	const example = "{matrix: {billing: {technical: 5}}, other: 1, abstain: 0.5} or {false_choice: {billing: 3}, other: 1}"
	d := deref(kv[1])
	if d.Kind != yaml.MappingNode {
		p.errAt(d, id, "costs", "must be a mapping such as "+example)
		return nil
	}
	pairs, err := mappingPairs(d, 4)
	if err != nil {
		p.posErr(err, d, id, "costs")
		return nil
	}
	before := len(p.errs)
	c := &Costs{}
	names := []string{"matrix", "false_choice", "other", "abstain"}
	option := func(n *yaml.Node, field, key string) bool {
		if q.OptionIndex(key) >= 0 {
			return true
		}
		var labels []string
		for _, o := range q.Options {
			labels = append(labels, o.Label)
		}
		p.errAt(n, id, field, fmt.Sprintf("%q is not an option of %s (options: %s)", key, id, strings.Join(labels, ", ")))
		return false
	}
	cost := func(n *yaml.Node, field string) (float64, bool) {
		x, ok := p.number(n, id, field)
		if ok && x < 0 {
			p.errAt(n, id, field, fmt.Sprintf("%s: a cost must not be negative", formatFloat(x)))
			return 0, false
		}
		return x, ok
	}
	var matrixNode, falseNode *yaml.Node
	for _, f := range pairs {
		field := "costs." + f.key
		switch f.key {
		case "matrix":
			matrixNode = f.keyNode
			m := deref(f.value)
			rows, err := mappingPairs(m, 3)
			if m.Kind != yaml.MappingNode || err != nil {
				p.errAt(m, id, field, "must map each true option to the costs of deciding other options, e.g. {billing: {technical: 5}}")
				continue
			}
			c.Matrix = map[string]map[string]float64{}
			for _, r := range rows {
				rf := field + "." + r.key
				if !option(r.keyNode, rf, r.key) {
					continue
				}
				rv := deref(r.value)
				cols, err := mappingPairs(rv, 2)
				if rv.Kind != yaml.MappingNode || err != nil {
					p.errAt(rv, id, rf, fmt.Sprintf("must map a decided option to its cost when %s is true, e.g. {technical: 5}", r.key))
					continue
				}
				row := map[string]float64{}
				for _, col := range cols {
					cf := rf + "." + col.key
					if !option(col.keyNode, cf, col.key) {
						continue
					}
					x, ok := cost(col.value, cf)
					if !ok {
						continue
					}
					if col.key == r.key && x != 0 {
						p.errAt(col.value, id, cf, "a right decision costs 0; give the costs of wrong decisions only")
						continue
					}
					row[col.key] = x
				}
				c.Matrix[r.key] = row
			}
		case "false_choice":
			falseNode = f.keyNode
			m := deref(f.value)
			cols, err := mappingPairs(m, 2)
			if m.Kind != yaml.MappingNode || err != nil {
				p.errAt(m, id, field, "must map a decided option to its cost when it is wrong, e.g. {billing: 3}")
				continue
			}
			c.FalseChoice = map[string]float64{}
			for _, col := range cols {
				cf := field + "." + col.key
				if !option(col.keyNode, cf, col.key) {
					continue
				}
				if x, ok := cost(col.value, cf); ok {
					c.FalseChoice[col.key] = x
				}
			}
		case "other":
			if x, ok := cost(f.value, field); ok {
				c.Other = &x
			}
		case "abstain":
			if x, ok := cost(f.value, field); ok {
				c.Abstain = &x
			}
		default:
			p.unknown(f.keyNode, id, field, names, "a choice's costs are matrix or false_choice, other and abstain")
		}
	}
	if len(p.errs) != before {
		return nil
	}
	switch {
	case matrixNode != nil && falseNode != nil:
		p.errAt(falseNode, id, "costs.false_choice", "give matrix or false_choice, not both")
		return nil
	case matrixNode == nil && falseNode == nil && c.Other == nil:
		p.errAt(d, id, "costs", "needs matrix, false_choice or other, e.g. "+example)
		return nil
	}
	if c.Other == nil {
		if miss := c.missing(q); miss != "" {
			p.errAt(d, id, "costs", fmt.Sprintf("no cost for %s; list it or set other (the cost of any wrong decision not listed)", miss))
			return nil
		}
	}
	c.Choice = true
	return c
}

// variants reads a question's variants: a mapping of name to the fields
// it overrides.
func (p *parser) variants(s *Set, id string, base *provider.Question, n *yaml.Node) {
	d := deref(n)
	if d.Kind == yaml.ScalarNode && d.ShortTag() == "!!null" {
		return
	}
	if d.Kind != yaml.MappingNode {
		p.errAt(d, id, "variants", "must be a mapping of variant name to the fields it changes, e.g. {v2: {instructions: …}}")
		return
	}
	pairs, err := p.conv.pairs(d, 3)
	if err != nil {
		p.posErr(err, d, id, "variants")
		return
	}
	var vs []Variant
	for _, kv := range pairs {
		field := "variants." + kv.key
		if !ValidVariantName(kv.key) {
			p.errAt(kv.keyNode, id, field, "a variant name is letters, digits, _, - and . (at most 64, starting with a letter or digit)")
			continue
		}
		vd := deref(kv.value)
		if vd.Kind != yaml.MappingNode {
			p.errAt(vd, id, field, "must be a mapping of the fields it changes (instructions, criteria, threshold, min_confidence), not "+kindWord(vd))
			continue
		}
		fields, err := p.conv.pairs(vd, 4)
		if err != nil {
			p.posErr(err, vd, id, field)
			continue
		}
		before := len(p.errs)
		qp := &qpos{key: kv.keyNode, value: kv.value, fields: map[string][2]*yaml.Node{}}
		v := Variant{Name: kv.key}
		for _, f := range fields {
			qp.fields[f.key] = [2]*yaml.Node{f.keyNode, f.value}
			switch f.key {
			case "type":
				p.errAt(f.keyNode, id, field+".type", "a variant keeps its question's type; make a new question to ask another type")
			case "instructions":
				raw, err := p.conv.toJSON(f.value)
				if err != nil {
					p.posErr(err, f.value, id, field+".instructions")
				} else {
					v.Instructions = raw
				}
			case "criteria":
				tmp := provider.Question{Type: base.Type}
				p.criteria(&tmp, qp, id, f.value)
				v.Options, v.Levels = tmp.Options, tmp.Levels
				if base.Type == provider.Score && v.Options != nil || base.Type != provider.Score && v.Levels != nil {
					p.errAt(f.value, id, field+".criteria", fmt.Sprintf("a %s's criteria are %s", base.Type, map[bool]string{true: "a list of levels", false: "a mapping of option label to description"}[base.Type == provider.Score]))
				}
			case "threshold":
				v.Threshold = p.unit(f.value, id, field+".threshold")
				if base.Type != provider.Noul {
					p.errAt(f.keyNode, id, field+".threshold", fmt.Sprintf("only a noul has a threshold; a %s's decision is its top option", base.Type))
				}
			case "min_confidence":
				v.MinConfidence = p.unit(f.value, id, field+".min_confidence")
				if base.Type == provider.Noul {
					p.errAt(f.keyNode, id, field+".min_confidence", "a noul has no confidence; use threshold instead")
				}
			default:
				p.unknown(f.keyNode, id, field+"."+f.key, variantFields, "a variant has "+listWords(variantFields))
			}
		}
		if len(p.errs) == before {
			p.qpos[VariantID(id, kv.key)] = qp
			vs = append(vs, v)
		}
	}
	if len(vs) > 0 {
		if s.Variants == nil {
			s.Variants = map[string][]Variant{}
		}
		s.Variants[id] = vs
	}
}

// criteria reads a question's criteria: a mapping becomes options (choice
// and noul), a list becomes levels (score). A shape that does not fit the
// type is left to the provider's validation, which says so.
func (p *parser) criteria(q *provider.Question, qp *qpos, id string, n *yaml.Node) {
	d := deref(n)
	switch d.Kind {
	case yaml.MappingNode:
		pairs, err := p.conv.pairs(d, 3)
		if err != nil {
			p.posErr(err, d, id, "criteria")
			return
		}
		qp.entries = pairs
		q.Options = make([]provider.Option, 0, len(pairs))
		for _, e := range pairs {
			raw, err := p.conv.toJSON(e.value)
			if err != nil {
				p.posErr(err, e.value, id, "criteria."+e.key)
				continue
			}
			q.Options = append(q.Options, provider.Option{Label: e.key, Description: raw})
		}
	case yaml.SequenceNode:
		qp.levels = d.Content
		q.Levels = make([]json.RawMessage, 0, len(d.Content))
		for i, e := range d.Content {
			raw, err := p.conv.toJSON(e)
			if err != nil {
				p.posErr(err, e, id, fmt.Sprintf("criteria[%d]", i))
				continue
			}
			q.Levels = append(q.Levels, raw)
		}
	case yaml.ScalarNode:
		if d.ShortTag() == "!!null" {
			return
		}
		var want string
		switch q.Type {
		case provider.Score:
			want = "a list of levels, lowest first"
		case provider.Choice:
			want = "a mapping of option label to description"
		default:
			want = "a mapping with keys true and false"
		}
		p.errAt(d, id, "criteria", "must be "+want+", not "+kindWord(d))
	}
}

func (p *parser) fixtures(s *Set, n *yaml.Node) {
	d := deref(n)
	switch d.Kind {
	case yaml.ScalarNode:
		if d.ShortTag() == "!!null" {
			return
		}
		if f := p.text(d, "", "fixtures"); f != "" {
			s.Fixtures = []string{f}
			s.fixturesAt = [][2]int{{d.Line, d.Column}}
			s.fixScal = true
		}
	case yaml.SequenceNode:
		for _, e := range d.Content {
			f := p.text(e, "", "fixtures")
			if f == "" && p.isText(e) {
				p.errAt(e, "", "fixtures", "an empty path; remove the entry")
			}
			if f != "" {
				s.Fixtures = append(s.Fixtures, f)
				s.fixturesAt = append(s.fixturesAt, [2]int{deref(e).Line, deref(e).Column})
			}
		}
	default:
		p.errAt(d, "", "fixtures", "must be a path or a list of paths")
	}
}

func (p *parser) gates(s *Set, n *yaml.Node) {
	d := deref(n)
	if d.Kind == yaml.ScalarNode && d.ShortTag() == "!!null" {
		return
	}
	if d.Kind != yaml.MappingNode {
		p.errAt(d, "", "gates", `must be a mapping of question id (or "*") to gate`)
		return
	}
	pairs, err := p.conv.pairs(d, 1)
	if err != nil {
		p.posErr(err, d, "", "gates")
		return
	}
	names := make([]string, len(gateFields))
	for i, f := range gateFields {
		names[i] = f.name
	}
	for _, kv := range pairs {
		if kv.key != "*" {
			if _, ok := s.Questions.Get(kv.key); !ok {
				if _, parsed := p.qpos[kv.key]; !parsed {
					msg := fmt.Sprintf(`no question %q; use "*" or a question id`, kv.key)
					if sug := suggest(kv.key, s.Questions.IDs()); sug != "" {
						msg = fmt.Sprintf("no question %q; did you mean %s?", kv.key, sug)
					}
					p.errAt(kv.keyNode, "", "gates", msg)
					continue
				}
			}
		}
		v := deref(kv.value)
		if v.Kind != yaml.MappingNode {
			p.errAt(v, "", "gates."+kv.key, "must be a mapping such as {min_accuracy: 0.8, max_ece: 0.25}")
			continue
		}
		fields, err := p.conv.pairs(v, 2)
		if err != nil {
			p.posErr(err, v, "", "gates."+kv.key)
			continue
		}
		var g Gate
		for _, f := range fields {
			idx := -1
			for i, gf := range gateFields {
				if gf.name == f.key {
					idx = i
				}
			}
			if idx < 0 {
				p.unknown(f.keyNode, "", "gates."+kv.key+"."+f.key, names, "a gate has "+listWords(names))
				continue
			}
			field := "gates." + kv.key + "." + f.key
			x, ok := p.number(f.value, "", field)
			if !ok {
				continue
			}
			if x < 0 || (gateFields[idx].max > 0 && x > gateFields[idx].max) {
				bound := fmt.Sprintf("[0, %s]", formatFloat(gateFields[idx].max))
				if gateFields[idx].max == 0 {
					bound = "[0, ∞)"
				}
				p.errAt(f.value, "", field, fmt.Sprintf("%s is outside %s", formatFloat(x), bound))
				continue
			}
			*gateFields[idx].get(&g) = &x
		}
		if s.Gates == nil {
			s.Gates = map[string]Gate{}
		}
		s.Gates[kv.key] = g
	}
}

// unknown reports an unknown field with a suggestion when one is close.
func (p *parser) unknown(k *yaml.Node, question, field string, known []string, help string) {
	last := field
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		last = field[i+1:]
	}
	if question == "" && field == last && serverField(last) {
		p.errAt(k, question, field, "a question set cannot choose the server or the key (your API key goes only where you send it); use --base-url and TYPESAFE_API_KEY")
		return
	}
	if a, ok := aliases[strings.ToLower(last)]; ok && slices.Contains(known, a) {
		p.errAt(k, question, field, fmt.Sprintf("unknown field; did you mean %s?", a))
		return
	}
	if sug := suggest(last, known); sug != "" {
		p.errAt(k, question, field, fmt.Sprintf("unknown field; did you mean %s?", sug))
		return
	}
	p.errAt(k, question, field, "unknown field; "+help)
}

// text returns a scalar's text, reporting anything that is not text.
func (p *parser) text(n *yaml.Node, question, field string) string {
	d := deref(n)
	if !p.isText(d) {
		p.errAt(d, question, field, "must be text, not "+kindWord(d))
		return ""
	}
	return d.Value
}

func (p *parser) isText(n *yaml.Node) bool {
	d := deref(n)
	return d.Kind == yaml.ScalarNode && (d.ShortTag() == "!!str" || d.ShortTag() == "!!timestamp")
}

// number returns a numeric scalar's value. A value that is not one is
// reported with what it is instead (quoted text that reads as a number, a
// date, a tagged value), never as "a number" again.
func (p *parser) number(n *yaml.Node, question, field string) (float64, bool) {
	d := deref(n)
	if d.Kind == yaml.ScalarNode && (d.ShortTag() == "!!int" || d.ShortTag() == "!!float") {
		raw, err := scalarJSON(d)
		if err != nil {
			p.posErr(err, d, question, field)
			return 0, false
		}
		x, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			p.errAt(d, question, field, fmt.Sprintf("%s is too large a number", d.Value))
			return 0, false
		}
		return x, true
	}
	msg := "must be a number, not " + kindWord(d)
	if d.Kind == yaml.ScalarNode && d.ShortTag() == "!!str" {
		_, err := strconv.ParseFloat(strings.TrimSpace(d.Value), 64)
		switch {
		case errors.Is(err, strconv.ErrRange) && isJSONNumber(d.Value):
			// YAML reads a number too large for a float as text.
			msg = fmt.Sprintf("%s is too large a number", d.Value)
		case err == nil && d.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
			msg = fmt.Sprintf("must be a number, not text: %s is quoted; write it without quotes", strconv.Quote(d.Value))
		}
	}
	p.errAt(d, question, field, msg)
	return 0, false
}

// unit returns a number in [0, 1].
func (p *parser) unit(n *yaml.Node, question, field string) *float64 {
	x, ok := p.number(n, question, field)
	if !ok {
		return nil
	}
	if x < 0 || x > 1 {
		p.errAt(deref(n), question, field, fmt.Sprintf("%s is outside [0, 1]", formatFloat(x)))
		return nil
	}
	return &x
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 64; i++ {
		n = n.Alias
	}
	return n
}

// kindWord names a node's kind for messages ("a number", "a list"), by
// what the node is in YAML: a tag the messages' own words do not cover is
// named, so "must be text, not text" cannot happen.
func kindWord(n *yaml.Node) string {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch t := n.ShortTag(); t {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		case "!!str":
			return "text"
		case "!!timestamp":
			return "a date"
		case "!!binary":
			return "binary data (!!binary)"
		default:
			return "a value tagged " + termsafe.String(t)
		}
	}
	return "a value"
}

// jsonKind names a JSON value's kind by its first byte.
func jsonKind(raw []byte) string {
	switch raw[0] {
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "number"
}

func listWords(w []string) string {
	if len(w) == 1 {
		return w[0]
	}
	return strings.Join(w[:len(w)-1], ", ") + " and " + w[len(w)-1]
}

// suggest returns the known word closest to s when it is close enough to
// be a typo, or "".
func suggest(s string, known []string) string {
	best, bestD := "", 3
	ls := strings.ToLower(s)
	for _, k := range known {
		d := levenshtein(ls, strings.ToLower(k))
		if d < bestD && d <= len(k)/3+1 {
			best, bestD = k, d
		}
	}
	return best
}

// levenshtein is the edit distance for suggestions, with long words (never
// a typo of a known field) cut short at 99 so a hostile key costs nothing.
func levenshtein(a, b string) int {
	if utf8.RuneCountInString(a) > 64 || utf8.RuneCountInString(b) > 64 {
		return 99
	}
	return editdist.Levenshtein(a, b)
}

// formatFloat spells x the shortest way that round-trips.
func formatFloat(x float64) string {
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// needsQuote reports whether a label must be quoted to be readable in a
// field path.
func needsQuote(label string) bool {
	if label == "" {
		return true
	}
	for _, r := range label {
		if r == ' ' || r == '.' || r == '"' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// serverField reports whether a top-level field looks like an attempt to
// choose the endpoint or the credentials, which a shared file must never do.
func serverField(k string) bool {
	switch strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(k)) {
	case "baseurl", "url", "endpoint", "host", "server", "apikey", "key", "token", "authorization":
		return true
	}
	return false
}

// isBareQuestions reports whether a document's top level is a question
// map rather than a question set: no question-set field, and every value a
// mapping with a type.
func isBareQuestions(pairs []pair) bool {
	if len(pairs) == 0 {
		return false
	}
	for _, kv := range pairs {
		if slices.Contains(topFields, kv.key) {
			return false
		}
		v := deref(kv.value)
		if v.Kind != yaml.MappingNode {
			return false
		}
		hasType := false
		for i := 0; i+1 < len(v.Content); i += 2 {
			if v.Content[i].Value == "type" {
				hasType = true
			}
		}
		if !hasType {
			return false
		}
	}
	return true
}
