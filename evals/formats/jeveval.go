package formats

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// JevEvalFiles names a jev-eval run's files: its question config (JSON),
// the labelled rows it was run on (JSONL) and its answer cache
// (`run --cache FILE`).
type JevEvalFiles struct{ Config, Data, Cache string }

// JevEvalConfig is a jev-eval question config, normalised as jev-eval
// sends it.
type JevEvalConfig struct {
	Model     string
	Questions provider.Questions
	Notes     []string
}

// ParseJevEvalConfig reads {"model"?, "questions": {id: q}} where q is
// jev-sort's {kind, instructions?, options|levels} or the wire shape
// {type, instructions?, criteria}, normalised as jev-eval does: missing
// instructions become the id, a choice's options list describes itself,
// score levels become the criteria list, and anything else — a noul's
// criteria included — is dropped (what jev-eval really sends), each drop
// named in Notes.
func ParseJevEvalConfig(file string, data []byte) (*JevEvalConfig, error) {
	top, _, err := object(file, 1, bytes.TrimSpace(data))
	if err != nil {
		return nil, fmt.Errorf("%s: a jev-eval config is one JSON object {\"model\", \"questions\"}: %w", file, err)
	}
	c := &JevEvalConfig{}
	for k := range top {
		if k != "model" && k != "questions" {
			c.Notes = append(c.Notes, fmt.Sprintf("config key %q is not read by jev-eval and not imported", k))
		}
	}
	if m, ok := top["model"]; ok && !isNull(m) {
		if c.Model, ok = jsonString(m); !ok {
			return nil, errAt(file, 0, "model must be a string")
		}
	}
	qraw, ok := top["questions"]
	if !ok {
		return nil, errAt(file, 0, "missing questions")
	}
	ids := orderedKeys(qraw)
	var qs map[string]map[string]json.RawMessage
	if err := json.Unmarshal(qraw, &qs); err != nil || len(qs) == 0 {
		return nil, errAt(file, 0, "questions must be a non-empty object of question id to question")
	}
	for _, id := range ids {
		q := qs[id]
		kind, _ := jsonString(q["kind"])
		if kind == "" {
			kind, _ = jsonString(q["type"])
		}
		w := provider.Question{Type: provider.QuestionType(kind)}
		if !w.Type.Valid() {
			return nil, errAt(file, 0, "question %s: kind/type must be noul, choice or score, not %q", id, kind)
		}
		if in, ok := q["instructions"]; ok && !isNull(in) {
			w.Instructions = provider.Compact(in)
		} else {
			w.Instructions = provider.String(id)
			c.Notes = append(c.Notes, fmt.Sprintf("%s: no instructions; jev-eval sends the question id %q as its instructions", id, id))
		}
		used := map[string]bool{"kind": true, "type": true, "instructions": true}
		crit := q["options"]
		if crit != nil {
			used["options"] = true
		} else if q["levels"] != nil {
			crit = q["levels"]
			used["levels"] = true
		} else if q["criteria"] != nil {
			crit = q["criteria"]
			used["criteria"] = true
		}
		switch w.Type {
		case provider.Noul:
			if crit != nil {
				c.Notes = append(c.Notes, fmt.Sprintf("%s: jev-eval drops a noul's criteria before sending, so they are not imported", id))
			}
		case provider.Choice:
			crit = bytes.TrimSpace(crit)
			switch {
			case len(crit) > 0 && crit[0] == '[':
				var labels []string
				if json.Unmarshal(crit, &labels) != nil {
					return nil, errAt(file, 0, "question %s: an options list holds label strings", id)
				}
				for _, l := range labels {
					w.Options = append(w.Options, provider.Option{Label: l, Description: provider.String(l)})
				}
			case len(crit) > 0 && crit[0] == '{':
				var m map[string]json.RawMessage
				_ = json.Unmarshal(crit, &m)
				for _, l := range orderedKeys(crit) {
					w.Options = append(w.Options, provider.Option{Label: l, Description: provider.Compact(m[l])})
				}
			default:
				return nil, errAt(file, 0, "question %s: a choice needs options (a list or a label → description object)", id)
			}
		case provider.Score:
			var levels []json.RawMessage
			if json.Unmarshal(crit, &levels) != nil || len(levels) == 0 {
				return nil, errAt(file, 0, "question %s: a score needs levels (a list, lowest first)", id)
			}
			for _, l := range levels {
				w.Levels = append(w.Levels, provider.Compact(l))
			}
		}
		var dropped []string
		for k := range q {
			if !used[k] {
				dropped = append(dropped, k)
			}
		}
		if len(dropped) > 0 {
			sort.Strings(dropped)
			c.Notes = append(c.Notes, fmt.Sprintf("%s: %s dropped by jev-eval's normalisation, not imported", id, strings.Join(dropped, ", ")))
		}
		if err := w.Validate(); err != nil {
			return nil, fmt.Errorf("%s: question %s cannot be sent to System One: %w", file, id, err)
		}
		c.Questions = append(c.Questions, provider.QuestionEntry{ID: id, Question: w})
	}
	return c, nil
}

// JevEvalStateHash is jev-eval's state_hash: the first 16 hex digits of
// sha256 over the state as Python's json.dumps(sort_keys=True,
// separators=(",", ":"), ensure_ascii=False) writes it.
func JevEvalStateHash(state json.RawMessage) string {
	var b bytes.Buffer
	writePython(&b, state)
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])[:16]
}

func writePython(b *bytes.Buffer, raw json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		b.Write(raw)
		return
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				pyString(b, k)
				b.WriteByte(':')
				walk(x[k])
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(e)
			}
			b.WriteByte(']')
		case string:
			pyString(b, x)
		case json.Number:
			b.WriteString(x.String())
		case bool:
			if x {
				b.WriteString("true")
			} else {
				b.WriteString("false")
			}
		default:
			b.WriteString("null")
		}
	}
	walk(v)
}

// pyString writes s as Python's json.dumps(ensure_ascii=False) does.
func pyString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else if r == utf8.RuneError {
				b.WriteString(`\ufffd`)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// JevEvalRow is one labelled row.
type JevEvalRow struct {
	State  json.RawMessage
	Labels map[string]json.RawMessage
	Meta   json.RawMessage
	Line   int
}

// LoadJevEvalRows reads jev-eval's labelled rows against the config: state
// a string or object, labels an object, meta an object; a gold that does
// not fit its question fails (as jev-eval fails the run before any call).
func LoadJevEvalRows(file string, data []byte, cfg *JevEvalConfig) ([]JevEvalRow, []string, error) {
	var rows []JevEvalRow
	var notes []string
	unknownQ := map[string]bool{}
	extra := map[string]bool{}
	err := jsonLines(data, func(line int, text []byte) error {
		if len(bytes.TrimSpace(text)) == 0 {
			return nil
		}
		m, keys, err := object(file, line, text)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k != "state" && k != "labels" && k != "meta" {
				extra[k] = true
			}
		}
		st := bytes.TrimSpace(m["state"])
		if len(st) == 0 || (st[0] != '"' && st[0] != '{') {
			return errAt(file, line, "state must be a string or an object")
		}
		r := JevEvalRow{State: provider.Compact(st), Line: line}
		if me, ok := m["meta"]; ok && !isNull(me) {
			if t := bytes.TrimSpace(me); t[0] != '{' {
				return errAt(file, line, "meta must be an object")
			}
			r.Meta = provider.Compact(me)
		}
		if l, ok := m["labels"]; ok && !isNull(l) {
			if json.Unmarshal(l, &r.Labels) != nil || r.Labels == nil {
				return errAt(file, line, "labels must be an object mapping question id to gold")
			}
		}
		for q, gold := range r.Labels {
			question, ok := cfg.Questions.Get(q)
			if !ok {
				unknownQ[q] = true
				delete(r.Labels, q)
				continue
			}
			lab, msg := jevEvalGold(question, gold)
			if msg != "" {
				return errAt(file, line, "labels.%s: %s", q, msg)
			}
			r.Labels[q] = lab
		}
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(unknownQ) > 0 {
		notes = append(notes, fmt.Sprintf("labels for questions the config does not have (%s) are ignored, as jev-eval does", strings.Join(sortedKeys(unknownQ), ", ")))
	}
	if len(extra) > 0 {
		notes = append(notes, fmt.Sprintf("row keys jev-eval does not read (%s) are not imported", strings.Join(sortedKeys(extra), ", ")))
	}
	return rows, notes, nil
}

// jevEvalGold checks a gold and returns it as a jevlab label: noul a
// boolean, choice a criterion key, score a criterion label → its index.
func jevEvalGold(q *provider.Question, gold json.RawMessage) (json.RawMessage, string) {
	g := bytes.TrimSpace(gold)
	switch q.Type {
	case provider.Noul:
		if string(g) != "true" && string(g) != "false" {
			return nil, fmt.Sprintf("a noul gold is a boolean, not %s", g)
		}
		return g, ""
	case provider.Choice:
		if s, ok := jsonString(g); ok && q.OptionIndex(s) >= 0 {
			return g, ""
		}
		return nil, fmt.Sprintf("%s is not a criterion key of the question", g)
	case provider.Score:
		s, ok := jsonString(g)
		for i, l := range q.Levels {
			if t, isStr := jsonString(l); ok && isStr && t == s {
				return json.RawMessage(strconv.Itoa(i)), ""
			}
		}
		return nil, fmt.Sprintf("%s is not one of the score's criteria labels", g)
	}
	return nil, "cannot be labelled"
}

// ImportJevEval reads a jev-eval config, its labelled rows and its cache
// into a folder: the set, the rows as a dataset (ids row-N by position,
// meta kept on the row), the cache's answers as recorded exchanges (the
// requests rebuilt from the rows, matched by state_hash) and with runs a
// stored run.
func ImportJevEval(files JevEvalFiles, runs bool) (*Folder, error) {
	if files.Config == "" || files.Data == "" {
		return nil, fmt.Errorf("--from jev-eval needs --config (the question config) and --data (the rows the cache was made from: the cache does not hold the states)")
	}
	cdata, err := readFile(files.Config, "jev-eval config")
	if err != nil {
		return nil, fmt.Errorf("jev-eval: %w", err)
	}
	cfg, err := ParseJevEvalConfig(files.Config, cdata)
	if err != nil {
		return nil, err
	}
	ddata, err := readFile(files.Data, "jev-eval rows")
	if err != nil {
		return nil, fmt.Errorf("jev-eval: %w", err)
	}
	rows, rnotes, err := LoadJevEvalRows(files.Data, ddata, cfg)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errAt(files.Data, 0, "no rows")
	}
	kdata, err := readFile(files.Cache, "jev-eval cache")
	if err != nil {
		return nil, fmt.Errorf("jev-eval: %w", err)
	}
	f := &Folder{Files: map[string][]byte{}, Source: strings.Join([]string{files.Config, files.Data, files.Cache}, " "), Format: "jev-eval"}
	f.Notes = append(f.Notes, cfg.Notes...)
	f.Notes = append(f.Notes, rnotes...)
	hashes := make([]string, len(rows))
	for i, r := range rows {
		hashes[i] = JevEvalStateHash(r.State)
	}
	type rowRec struct {
		answers map[string]json.RawMessage
		errMsg  string
		tokens  int64
		model   string
		line    int
	}
	recs := map[int]*rowRec{}
	seen := map[[2]string]int{}
	models := map[string]bool{}
	newer := false
	err = jsonLines(kdata, func(line int, text []byte) error {
		if len(bytes.TrimSpace(text)) == 0 {
			return nil
		}
		m, _, err := object(files.Cache, line, text)
		if err != nil {
			return err
		}
		sh, ok := jsonString(m["state_hash"])
		if !ok || sh == "" {
			return errAt(files.Cache, line, "state_hash missing; a cache line without it cannot be matched to a row")
		}
		qid, ok := jsonString(m["id"])
		if !ok || qid == "" {
			return errAt(files.Cache, line, "id (the question id) missing")
		}
		row, err := strconv.Atoi(string(bytes.TrimSpace(m["row"])))
		if err != nil || row < 0 {
			return errAt(files.Cache, line, "row must be a 0-based row index")
		}
		if row >= len(rows) {
			return errAt(files.Cache, line, "row %d, but %s has %d rows: the cache was made from another data file", row, filepath.Base(files.Data), len(rows))
		}
		if hashes[row] != sh {
			return errAt(files.Cache, line, "state_hash %s does not match row %d's state (%s, line %d; its hash is %s): the cache was made from another data file", sh, row, filepath.Base(files.Data), rows[row].Line, hashes[row])
		}
		if _, ok := cfg.Questions.Get(qid); !ok {
			return errAt(files.Cache, line, "question %q is not in the config", qid)
		}
		k := [2]string{strconv.Itoa(row), qid}
		if first, dup := seen[k]; dup {
			return errAt(files.Cache, line, "row %d question %s is cached twice (first at line %d)", row, qid, first)
		}
		seen[k] = line
		rr := recs[row]
		if rr == nil {
			rr = &rowRec{answers: map[string]json.RawMessage{}, tokens: -1, line: line}
			recs[row] = rr
		}
		if mo, ok := jsonString(m["model"]); ok {
			rr.model = mo
			models[mo] = true
		}
		if e, ok := jsonString(m["error"]); ok && e != "" {
			rr.errMsg = e
			newer = true
		}
		if t, ok := m["input_tokens"]; ok && !isNull(t) {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(t)), 10, 64)
			if err == nil {
				rr.tokens = n
			}
			newer = true
		}
		if a, ok := m["answer"]; ok && !isNull(a) {
			rr.answers[qid] = provider.Compact(a)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	set := &questionset.Set{Questions: cfg.Questions, Model: cfg.Model, Name: strings.TrimSuffix(filepath.Base(files.Config), filepath.Ext(files.Config))}
	if set.Model == "" && len(models) == 1 {
		for mo := range models {
			set.Model = mo
		}
	}
	set.State = rows[0].State
	set.Dataset = "dataset.jsonl"
	set.Fixtures = []string{"recorded.jsonl"}
	f.Set = set
	var ds, fx bytes.Buffer
	var run Run
	run.Name = strings.TrimSuffix(filepath.Base(files.Cache), filepath.Ext(files.Cache))
	var round []Record
	unanswered := 0
	for i, r := range rows {
		id := fmt.Sprintf("row-%d", i)
		writeRowHead(&ds, set, id, r.State, r.Labels)
		if r.Meta != nil {
			ds.WriteString(`, "meta": `)
			ds.Write(r.Meta)
		}
		ds.WriteString("}\n")
		rr := recs[i]
		if rr == nil {
			continue
		}
		var ab bytes.Buffer
		ab.WriteByte('{')
		var asked []string
		for _, e := range set.Questions {
			if a, ok := rr.answers[e.ID]; ok {
				if len(asked) > 0 {
					ab.WriteByte(',')
				}
				asked = append(asked, e.ID)
				ab.Write(provider.String(e.ID))
				ab.WriteByte(':')
				ab.Write(a)
			}
		}
		ab.WriteByte('}')
		if len(asked) < len(set.Questions) {
			unanswered += len(set.Questions) - len(asked)
		}
		model := rr.model
		if model == "" {
			model = set.ModelName()
		}
		rec := Record{ItemID: id, Model: model, InputTokens: rr.tokens, OutputTokens: -1, Error: rr.errMsg, Line: rr.line}
		if rr.errMsg == "" && len(asked) > 0 {
			rec.Answers = ab.Bytes()
			sub := set.Request(r.State).Subset(asked)
			sub.Model = model
			qj, _ := sub.Questions.MarshalJSON()
			fx.WriteString(`{"id": `)
			fx.Write(provider.String(id))
			fx.WriteString(`, "request": {"model": `)
			fx.Write(provider.String(model))
			fx.WriteString(`, "state": `)
			fx.Write(r.State)
			fx.WriteString(`, "questions": `)
			fx.Write(qj)
			fx.WriteString(`}, "response": {"model": `)
			fx.Write(provider.String(model))
			fx.WriteString(`, "answers": `)
			fx.Write(rec.Answers)
			if rr.tokens >= 0 {
				fmt.Fprintf(&fx, `, "usage": {"input_tokens": %d, "output_tokens": 0}`, rr.tokens)
			}
			fx.WriteString(`}, "uncertain": ["/response/model"`)
			if rr.tokens >= 0 {
				fx.WriteString(`, "/response/usage/output_tokens"`)
			}
			fx.WriteString("]}\n")
		} else if rr.errMsg == "" {
			rec.Error = "jev-eval returned no answer for this row"
		}
		round = append(round, rec)
	}
	f.Files["dataset.jsonl"] = ds.Bytes()
	f.Files["recorded.jsonl"] = fx.Bytes()
	f.note("%s → dataset.jsonl (ids row-N by position; meta kept on the rows for slicing) and %s → recorded.jsonl (%d rows answered); requests rebuilt from the rows, matched by state_hash", filepath.Base(files.Data), filepath.Base(files.Cache), len(round))
	f.note("jev-eval's cache keeps the requested model, not the one that answered: the answering model is written as %s and marked uncertain", set.ModelName())
	if !newer {
		f.note("this cache predates usage and errors (no input_tokens, call or error fields): tokens and cost are unknown")
	}
	if n := len(rows) - len(round); n > 0 {
		f.note("%s have no cache lines (jev-eval asks nothing of a row without labels): a stored run holds them as not recorded", plural(n, "row"))
	}
	if unanswered > 0 {
		f.note("%d row × question pairs were not asked (jev-eval asks a row only the questions it labels): they are stored as unanswered", unanswered)
	}
	for _, side := range []string{"thresholds.json", "calibration.json"} {
		if exists(filepath.Join(filepath.Dir(files.Cache), side)) {
			f.note("%s beside the cache is jev-eval's saved operating point; jevlab has no slot for it and does not import it", side)
		}
	}
	if runs {
		run.Model = set.ModelName()
		run.Rounds = [][]Record{round}
		f.Runs = []Run{run}
	}
	return f, nil
}

// writeRowHead writes the start of a jevlab dataset row — {"id": ID,
// "state": STATE and, when there are labels, "labels": {…} in the set's
// question order — leaving the object open for the caller's extra fields.
func writeRowHead(ds *bytes.Buffer, set *questionset.Set, id string, state json.RawMessage, labels map[string]json.RawMessage) {
	ds.WriteString(`{"id": `)
	ds.Write(provider.String(id))
	ds.WriteString(`, "state": `)
	ds.Write(state)
	if len(labels) == 0 {
		return
	}
	ds.WriteString(`, "labels": {`)
	n := 0
	for _, e := range set.Questions {
		if l, ok := labels[e.ID]; ok {
			if n > 0 {
				ds.WriteString(", ")
			}
			n++
			ds.Write(provider.String(e.ID))
			ds.WriteString(": ")
			ds.Write(l)
		}
	}
	ds.WriteString("}")
}
