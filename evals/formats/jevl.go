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

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// JEVLVersion is the newest jevkit record format version this reader knows.
const JEVLVersion = 1

// JEVLRecord is one jevkit JEVL v1 record. Extra holds the top-level keys
// the spec does not name, kept to be written back on export.
type JEVLRecord struct {
	V        int
	ID       string
	TS       string
	Model    string
	State    json.RawMessage // nil when request.state is absent
	Quest    json.RawMessage // request.questions
	ReqExtra map[string]json.RawMessage
	Answers  json.RawMessage
	Usage    *provider.Usage
	Label    map[string]json.RawMessage
	Tags     []string
	Meta     map[string]json.RawMessage
	Extra    map[string]json.RawMessage
	File     string
	Line     int
}

var jevlKeys = []string{"v", "id", "ts", "model", "request", "answers", "usage", "label", "tags", "meta"}

// ParseJEVL reads JEVL v1 records: blank lines skipped; a line that fails
// to parse is an error, never a skip; v missing, not an integer or newer
// than JEVLVersion is refused; the required keys must be there with their
// types. Duplicate ids are allowed (the same request recorded twice).
func ParseJEVL(file string, data []byte) ([]JEVLRecord, error) {
	var out []JEVLRecord
	err := jsonLines(data, func(line int, text []byte) error {
		if len(bytes.TrimSpace(text)) == 0 {
			return nil
		}
		m, _, err := object(file, line, text)
		if err != nil {
			return err
		}
		r := JEVLRecord{File: file, Line: line}
		vraw, ok := m["v"]
		if !ok {
			return errAt(file, line, "missing v (the record format version)")
		}
		v, err := strconv.Atoi(string(bytes.TrimSpace(vraw)))
		if err != nil {
			return errAt(file, line, "v must be an integer, not %s", vraw)
		}
		if v > JEVLVersion {
			return errAt(file, line, "v %d: this reader knows JEVL record format v%d; a newer version needs a newer jevlab", v, JEVLVersion)
		}
		if v < 1 {
			return errAt(file, line, "v %d: JEVL versions start at 1", v)
		}
		r.V = v
		for _, k := range []string{"id", "ts", "model"} {
			s, ok := jsonString(m[k])
			if !ok || s == "" {
				return errAt(file, line, "%s must be a non-empty string", k)
			}
			switch k {
			case "id":
				r.ID = s
			case "ts":
				r.TS = s
			case "model":
				r.Model = s
			}
		}
		req, _, err := object(file, line, m["request"])
		if err != nil || req == nil {
			return errAt(file, line, "request must be an object {state, questions}")
		}
		q, ok := req["questions"]
		if !ok || len(bytes.TrimSpace(q)) == 0 || bytes.TrimSpace(q)[0] != '{' {
			return errAt(file, line, "request.questions must be an object (what was sent)")
		}
		r.Quest = provider.Compact(q)
		if st, ok := req["state"]; ok && !isNull(st) {
			r.State = provider.Compact(st)
		}
		for k, v := range req {
			if k != "state" && k != "questions" {
				if r.ReqExtra == nil {
					r.ReqExtra = map[string]json.RawMessage{}
				}
				r.ReqExtra[k] = v
			}
		}
		a := bytes.TrimSpace(m["answers"])
		if len(a) == 0 || a[0] != '{' {
			return errAt(file, line, "answers must be an object (the API's answers, verbatim)")
		}
		r.Answers = a
		if u, ok := m["usage"]; ok && !isNull(u) {
			var us provider.Usage
			if json.Unmarshal(u, &us) != nil {
				return errAt(file, line, "usage must be an object {input_tokens, output_tokens}")
			}
			r.Usage = &us
		}
		if l, ok := m["label"]; ok && !isNull(l) {
			if json.Unmarshal(l, &r.Label) != nil || r.Label == nil {
				return errAt(file, line, "label must be an object mapping question id to gold")
			}
		}
		if t, ok := m["tags"]; ok && !isNull(t) {
			if json.Unmarshal(t, &r.Tags) != nil {
				return errAt(file, line, "tags must be a list of strings")
			}
		}
		if me, ok := m["meta"]; ok && !isNull(me) {
			if json.Unmarshal(me, &r.Meta) != nil || r.Meta == nil {
				return errAt(file, line, "meta must be an object")
			}
		}
		for k, v := range m {
			if !contains(jevlKeys, k) {
				if r.Extra == nil {
					r.Extra = map[string]json.RawMessage{}
				}
				r.Extra[k] = v
			}
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// requestedModel is the model a record's request named: meta.requested_model
// (cassettes), else the model that answered.
func (r *JEVLRecord) requestedModel() (string, bool) {
	if s, ok := jsonString(r.Meta["requested_model"]); ok && s != "" {
		return s, true
	}
	return r.Model, false
}

// JEVLDigest is jevkit's record id: "sha256:" + hex sha256 of the
// canonical JSON of {model, questions, state} (keys sorted, compact,
// numbers as written). Python and JS jevkit disagree on float spelling,
// so a file's id is kept as it is and this digest only reported.
func JEVLDigest(model string, questions, state json.RawMessage) string {
	var b bytes.Buffer
	b.WriteString(`{"model":`)
	b.Write(provider.String(model))
	b.WriteString(`,"questions":`)
	b.Write(canonical(questions))
	b.WriteString(`,"state":`)
	if state == nil {
		b.WriteString("null")
	} else {
		b.Write(canonical(state))
	}
	b.WriteByte('}')
	sum := sha256.Sum256(b.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// canonical re-encodes JSON with object keys sorted by code point, compact,
// numbers and strings kept as written, non-ASCII unescaped.
func canonical(raw json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return provider.Compact(raw)
	}
	var b bytes.Buffer
	writeCanonical(&b, v)
	return b.Bytes()
}

func writeCanonical(b *bytes.Buffer, v any) {
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
			b.Write(provider.String(k))
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case json.Number:
		b.WriteString(x.String())
	case string:
		b.Write(provider.String(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	default:
		b.WriteString("null")
	}
}

// jevlCarrier is the "jevl" object a fixture line carries so an export
// can write the record back with what jevlab has no slot for.
type jevlCarrier struct {
	V     int                        `json:"v"`
	ID    string                     `json:"id"`
	TS    string                     `json:"ts"`
	Label map[string]json.RawMessage `json:"label,omitempty"`
	Tags  []string                   `json:"tags,omitempty"`
	Meta  map[string]json.RawMessage `json:"meta,omitempty"`
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
	// RequestExtra holds request keys beside state and questions.
	RequestExtra map[string]json.RawMessage `json:"request_extra,omitempty"`
}

// ImportJEVL reads JEVL v1 files into a folder: the question set from the
// records' request.questions (one question map per import), a dataset of
// the distinct states with their labels (tags kept on the rows), one
// recorded exchange per record (its id, ts, meta and unknown keys carried
// for export), and with runs one stored run per file: an item's records in
// ts order become its repeats when every item has as many, else the last
// record answers (the cassette rule).
func ImportJEVL(files []string, runs bool) (*Folder, error) {
	f := &Folder{Files: map[string][]byte{}, Source: strings.Join(files, " "), Format: "jevl"}
	type fileRecs struct {
		name string
		recs []JEVLRecord
	}
	var all []fileRecs
	var questions json.RawMessage
	for _, p := range files {
		data, err := readFile(p, "JEVL file")
		if err != nil {
			return nil, fmt.Errorf("jevl: %w", err)
		}
		recs, err := ParseJEVL(p, data)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, errAt(p, 0, "no records")
		}
		for _, r := range recs {
			if questions == nil {
				questions = r.Quest
			} else if !bytes.Equal(canonical(questions), canonical(r.Quest)) {
				return nil, errAt(p, r.Line, "this record asks other questions than %s:%d; jevlab imports one question map per folder: split the records by question map", recs[0].File, recs[0].Line)
			}
		}
		all = append(all, fileRecs{name: p, recs: recs})
	}
	var qs provider.Questions
	if err := json.Unmarshal(questions, &qs); err != nil {
		return nil, fmt.Errorf("jevl: %s:%d: request.questions: %w", all[0].name, all[0].recs[0].Line, err)
	}
	set := &questionset.Set{Questions: qs}
	first := all[0].recs[0]
	if err := set.Request(first.State).Validate(); err != nil && first.State != nil {
		return nil, fmt.Errorf("jevl: %s:%d: request.questions cannot be sent as they are: %w", first.File, first.Line, err)
	}
	f.Set = set
	set.Name = strings.TrimSuffix(filepath.Base(all[0].name), filepath.Ext(all[0].name))
	models := map[string]bool{}
	inferred := 0
	for _, fr := range all {
		for i := range fr.recs {
			m, ok := fr.recs[i].requestedModel()
			models[m] = true
			if !ok {
				inferred++
			}
		}
	}
	if len(models) == 1 {
		for m := range models {
			set.Model = m
		}
	} else {
		f.note("records request %d models; the set requests the first file's first record's, and each fixture keeps its own", len(models))
		set.Model, _ = first.requestedModel()
	}
	if inferred > 0 {
		f.note("%s have no meta.requested_model: their requested model is taken to be the answering model (marked uncertain)", plural(inferred, "record"))
	}

	// Items: one per distinct state, ids from the first record's id.
	type item struct {
		id     string
		state  json.RawMessage
		labels map[string]json.RawMessage
		tags   []string
		line   string
	}
	var items []*item
	byState := map[string]*item{}
	idTaken := map[string]bool{}
	badIDs := 0
	var fixtures bytes.Buffer
	metaKeys, extraKeys := map[string]bool{}, map[string]bool{}
	for _, fr := range all {
		for i := range fr.recs {
			r := &fr.recs[i]
			if r.State == nil {
				return nil, errAt(r.File, r.Line, "request.state is absent; jevlab asks every item about a state")
			}
			key := string(canonical(r.State))
			it := byState[key]
			if it == nil {
				id := strings.TrimPrefix(r.ID, "sha256:")
				if len(id) > 12 {
					id = id[:12]
				}
				for idTaken[id] {
					id += "'"
				}
				idTaken[id] = true
				it = &item{id: id, state: r.State, line: fmt.Sprintf("%s:%d", filepath.Base(r.File), r.Line)}
				byState[key] = it
				items = append(items, it)
			}
			for q, gold := range r.Label {
				lab, msg := jevlLabel(set, q, gold)
				if msg != "" {
					return nil, errAt(r.File, r.Line, "label.%s: %s", q, msg)
				}
				if prev, ok := it.labels[q]; ok && string(prev) != string(lab) {
					f.note("%s: label.%s changes from %s to %s between records of the same state; the last wins", fmt.Sprintf("%s:%d", filepath.Base(r.File), r.Line), q, prev, lab)
				}
				if it.labels == nil {
					it.labels = map[string]json.RawMessage{}
				}
				it.labels[q] = lab
			}
			for _, t := range r.Tags {
				if !contains(it.tags, t) {
					it.tags = append(it.tags, t)
				}
			}
			if JEVLDigest(r.Model, r.Quest, r.State) != r.ID {
				badIDs++
			}
			for k := range r.Meta {
				metaKeys[k] = true
			}
			for k := range r.Extra {
				extraKeys[k] = true
			}
			writeJEVLExchange(&fixtures, r)
		}
	}
	var ds bytes.Buffer
	tagged := 0
	for _, it := range items {
		writeRowHead(&ds, set, it.id, it.state, it.labels)
		if len(it.tags) > 0 {
			tagged++
			tj, _ := json.Marshal(it.tags)
			ds.WriteString(`, "tags": `)
			ds.Write(tj)
		}
		ds.WriteString("}\n")
	}
	set.State = items[0].state
	set.Dataset = "dataset.jsonl"
	set.Fixtures = []string{"recorded.jsonl"}
	f.Files["dataset.jsonl"] = ds.Bytes()
	f.Files["recorded.jsonl"] = fixtures.Bytes()
	nrec := 0
	for _, fr := range all {
		nrec += len(fr.recs)
	}
	f.note("%s → %s in dataset.jsonl (one per distinct state; ids are the first record's id, shortened) and %s in recorded.jsonl", plural(nrec, "record"), plural(len(items), "item"), plural(nrec, "exchange"))
	if tagged > 0 {
		f.note("tags are kept on %s as a \"tags\" field; jevlab has no slices, so they are not used in metrics", plural(tagged, "dataset row"))
	}
	if badIDs > 0 {
		f.note("%d of %d record ids do not recompute as jevlab digests {model, questions, state} (jevkit's Python and JS writers spell floats differently); the ids are kept as they are", badIDs, nrec)
	}
	if len(metaKeys) > 0 {
		f.note("meta (%s) has no slot in jevlab; it is kept in each fixture line's \"jevl\" object and written back by export --to jevl", strings.Join(sortedKeys(metaKeys), ", "))
	}
	if len(extraKeys) > 0 {
		f.note("unknown top-level keys (%s) are kept in each fixture line's \"jevl\" object and written back by export --to jevl", strings.Join(sortedKeys(extraKeys), ", "))
	}
	f.note("JEVL records hold no latency and no per-record errors")
	if !runs {
		return f, nil
	}
	for _, fr := range all {
		per := map[string][]*JEVLRecord{}
		for i := range fr.recs {
			r := &fr.recs[i]
			id := byState[string(canonical(r.State))].id
			per[id] = append(per[id], r)
		}
		rounds := -1
		for _, rs := range per {
			sort.SliceStable(rs, func(i, j int) bool { return rs[i].TS < rs[j].TS })
			if rounds == -1 {
				rounds = len(rs)
			} else if rounds != len(rs) {
				rounds = 0
			}
		}
		run := Run{Name: strings.TrimSuffix(filepath.Base(fr.name), filepath.Ext(fr.name)), Model: set.ModelName()}
		if rounds <= 0 {
			rounds = 1
			run.Notes = append(run.Notes, "items have different numbers of records: the last one (by ts) answers each")
			f.note("%s: items have different numbers of records, so the run holds the last record of each (cassette rule), not repeats", filepath.Base(fr.name))
		}
		for k := 0; k < rounds; k++ {
			var recs []Record
			for _, it := range items {
				rs := per[it.id]
				if len(rs) == 0 {
					continue
				}
				r := rs[len(rs)-1]
				if rounds > 1 {
					r = rs[k]
				}
				rc := Record{ItemID: it.id, Model: r.Model, InputTokens: -1, OutputTokens: -1, Answers: r.Answers, Line: r.Line}
				if r.Usage != nil {
					rc.InputTokens, rc.OutputTokens = r.Usage.InputTokens, r.Usage.OutputTokens
				}
				recs = append(recs, rc)
			}
			run.Rounds = append(run.Rounds, recs)
		}
		f.Runs = append(f.Runs, run)
	}
	return f, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// jevlLabel turns a JEVL gold into a jevlab label: choice → the option key,
// score → a whole level index, noul → a JSON boolean (a string "false"
// would be true to jevkit's truthiness, so only booleans are accepted).
func jevlLabel(set *questionset.Set, q string, gold json.RawMessage) (json.RawMessage, string) {
	question, ok := set.Questions.Get(q)
	if !ok {
		return nil, fmt.Sprintf("no question %q in request.questions", q)
	}
	g := bytes.TrimSpace(gold)
	switch question.Type {
	case provider.Noul:
		if string(g) != "true" && string(g) != "false" {
			return nil, fmt.Sprintf("a noul label must be a JSON boolean, not %s", g)
		}
	case provider.Choice:
		s, ok := jsonString(g)
		if !ok || question.OptionIndex(s) < 0 {
			return nil, fmt.Sprintf("%s is not an option key of the question", g)
		}
	case provider.Score:
		x, err := strconv.ParseFloat(string(g), 64)
		if err != nil {
			return nil, fmt.Sprintf("a score label is a level index, not %s", g)
		}
		if x != float64(int(x)) {
			return nil, fmt.Sprintf("score label %s is not a whole level (jevkit's Python reads it as level %d, its JS as no level); give the index", g, int(x))
		}
		if int(x) < 0 || int(x) >= len(question.Levels) {
			return nil, fmt.Sprintf("level %d is out of range 0..%d", int(x), len(question.Levels)-1)
		}
		return json.RawMessage(strconv.Itoa(int(x))), ""
	}
	return g, ""
}

// writeJEVLExchange appends one record as a recorded exchange with its
// "jevl" carrier.
func writeJEVLExchange(b *bytes.Buffer, r *JEVLRecord) {
	model, known := r.requestedModel()
	b.WriteString(`{"id": `)
	b.Write(provider.String(r.ID))
	b.WriteString(`, "request": {"model": `)
	b.Write(provider.String(model))
	b.WriteString(`, "state": `)
	b.Write(r.State)
	b.WriteString(`, "questions": `)
	b.Write(r.Quest)
	b.WriteString(`}, "response": {"model": `)
	b.Write(provider.String(r.Model))
	b.WriteString(`, "answers": `)
	b.Write(r.Answers)
	if r.Usage != nil {
		fmt.Fprintf(b, `, "usage": {"input_tokens": %d, "output_tokens": %d}`, r.Usage.InputTokens, r.Usage.OutputTokens)
	}
	b.WriteString(`}, "recorded_at": `)
	b.Write(provider.String(r.TS))
	if !known {
		b.WriteString(`, "uncertain": ["/request/model"]`)
	}
	c := jevlCarrier{V: r.V, ID: r.ID, TS: r.TS, Label: r.Label, Tags: r.Tags, Meta: r.Meta, Extra: r.Extra, RequestExtra: r.ReqExtra}
	cj, _ := json.Marshal(c)
	b.WriteString(`, "jevl": `)
	b.Write(cj)
	b.WriteString("}\n")
}

// WriteJEVL writes r as one JEVL v1 line: the spec's keys in its order,
// then the unknown keys it was read with (sorted).
func WriteJEVL(b *bytes.Buffer, r *JEVLRecord) {
	fmt.Fprintf(b, `{"v": %d, "id": `, JEVLVersion)
	b.Write(provider.String(r.ID))
	b.WriteString(`, "ts": `)
	b.Write(provider.String(r.TS))
	b.WriteString(`, "model": `)
	b.Write(provider.String(r.Model))
	b.WriteString(`, "request": {`)
	if r.State != nil {
		b.WriteString(`"state": `)
		b.Write(r.State)
		b.WriteString(`, `)
	}
	b.WriteString(`"questions": `)
	b.Write(r.Quest)
	for _, k := range sortedRawKeys(r.ReqExtra) {
		b.WriteString(", ")
		b.Write(provider.String(k))
		b.WriteString(": ")
		b.Write(r.ReqExtra[k])
	}
	b.WriteString(`}, "answers": `)
	b.Write(r.Answers)
	if r.Usage != nil {
		fmt.Fprintf(b, `, "usage": {"input_tokens": %d, "output_tokens": %d}`, r.Usage.InputTokens, r.Usage.OutputTokens)
	}
	writeRawMap := func(name string, m map[string]json.RawMessage, order []string) {
		if len(m) == 0 {
			return
		}
		b.WriteString(`, "` + name + `": {`)
		if order == nil {
			order = sortedRawKeys(m)
		}
		n := 0
		for _, k := range order {
			v, ok := m[k]
			if !ok {
				continue
			}
			if n > 0 {
				b.WriteString(", ")
			}
			n++
			b.Write(provider.String(k))
			b.WriteString(": ")
			b.Write(v)
		}
		b.WriteString("}")
	}
	writeRawMap("label", r.Label, nil)
	if len(r.Tags) > 0 {
		tj, _ := json.Marshal(r.Tags)
		b.WriteString(`, "tags": `)
		b.Write(tj)
	}
	writeRawMap("meta", r.Meta, nil)
	for _, k := range sortedRawKeys(r.Extra) {
		b.WriteString(", ")
		b.Write(provider.String(k))
		b.WriteString(": ")
		b.Write(r.Extra[k])
	}
	b.WriteString("}\n")
}

func sortedRawKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// JEVLFromExchange turns a recorded exchange (a fixture line) into a JEVL
// record: the "jevl" object an import left on it gives back the id, ts,
// label, tags, meta and unknown keys; otherwise the id is jevlab's digest,
// ts the exchange's recorded_at (fallback when unknown) and the requested
// model goes to meta.requested_model. ok is false for an exchange that
// has no answers to write.
func JEVLFromExchange(line []byte, fallbackTS string) (JEVLRecord, bool, error) {
	var ex struct {
		ID         string          `json:"id"`
		Request    json.RawMessage `json:"request"`
		Response   json.RawMessage `json:"response"`
		RecordedAt string          `json:"recorded_at"`
		JEVL       *jevlCarrier    `json:"jevl"`
	}
	if err := json.Unmarshal(line, &ex); err != nil {
		return JEVLRecord{}, false, err
	}
	var req struct {
		Model     string          `json:"model"`
		State     json.RawMessage `json:"state"`
		Questions json.RawMessage `json:"questions"`
	}
	var resp struct {
		Model   string          `json:"model"`
		Answers json.RawMessage `json:"answers"`
		Usage   *provider.Usage `json:"usage"`
	}
	if err := json.Unmarshal(ex.Request, &req); err != nil {
		return JEVLRecord{}, false, fmt.Errorf("request: %w", err)
	}
	if err := json.Unmarshal(ex.Response, &resp); err != nil {
		return JEVLRecord{}, false, fmt.Errorf("response: %w", err)
	}
	if len(resp.Answers) == 0 || isNull(resp.Answers) || req.Questions == nil {
		return JEVLRecord{}, false, nil
	}
	r := JEVLRecord{V: JEVLVersion, Model: resp.Model, State: provider.Compact(req.State), Quest: provider.Compact(req.Questions), Answers: resp.Answers, Usage: resp.Usage}
	if c := ex.JEVL; c != nil {
		r.ID, r.TS, r.Label, r.Tags, r.Meta, r.Extra, r.ReqExtra = c.ID, c.TS, c.Label, c.Tags, c.Meta, c.Extra, c.RequestExtra
		return r, true, nil
	}
	r.ID = JEVLDigest(resp.Model, r.Quest, r.State)
	r.TS = ex.RecordedAt
	if r.TS == "" {
		r.TS = fallbackTS
	}
	if req.Model != "" && req.Model != resp.Model {
		r.Meta = map[string]json.RawMessage{"requested_model": provider.String(req.Model)}
	}
	return r, true, nil
}
