package formats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// Prediction is one line of a jevassert predictions (recording) file.
type Prediction struct {
	CaseID    string
	Model     string
	LatencyMS float64
	// LatencyRaw is latency_ms as written (its number spelling kept).
	LatencyRaw json.RawMessage
	Usage      *provider.Usage
	Answers    json.RawMessage
	Error      string
	Line       int
}

var predictionKeys = []string{"case_id", "model", "latency_ms", "usage", "answers", "error"}

// LoadPredictions reads a jevassert predictions file as load_predictions
// does: blank lines skipped, invalid JSON, a missing or empty case_id and a
// duplicate case_id are errors (file:line). Keys jevassert never writes
// are reported in extra (they cannot be kept).
func LoadPredictions(file string, data []byte) (preds []Prediction, extra []string, err error) {
	seen := map[string]int{}
	extraSeen := map[string]bool{}
	err = jsonLines(data, func(line int, text []byte) error {
		if len(bytes.TrimSpace(text)) == 0 {
			return nil
		}
		m, keys, err := object(file, line, text)
		if err != nil {
			return err
		}
		id, ok := jsonString(m["case_id"])
		if !ok || id == "" {
			return errAt(file, line, "case_id missing or empty; every prediction names its case")
		}
		if first, dup := seen[id]; dup {
			return errAt(file, line, "duplicate case_id %q (first at line %d)", id, first)
		}
		seen[id] = line
		for _, k := range keys {
			if !contains(predictionKeys, k) && !extraSeen[k] {
				extraSeen[k] = true
				extra = append(extra, k)
			}
		}
		p := Prediction{CaseID: id, Line: line}
		if !isNull(m["model"]) {
			if p.Model, ok = jsonString(m["model"]); !ok {
				return errAt(file, line, "case %s: model must be a string or null", id)
			}
		}
		if !isNull(m["latency_ms"]) {
			if p.LatencyMS, err = strconv.ParseFloat(string(bytes.TrimSpace(m["latency_ms"])), 64); err != nil {
				return errAt(file, line, "case %s: latency_ms must be a number or null", id)
			}
			p.LatencyRaw = bytes.TrimSpace(m["latency_ms"])
		}
		if !isNull(m["usage"]) {
			var u provider.Usage
			if json.Unmarshal(m["usage"], &u) != nil {
				return errAt(file, line, "case %s: usage must be an object {input_tokens, output_tokens}", id)
			}
			p.Usage = &u
		}
		if !isNull(m["error"]) {
			if p.Error, ok = jsonString(m["error"]); !ok {
				return errAt(file, line, "case %s: error must be a string or null", id)
			}
		}
		if !isNull(m["answers"]) {
			a := bytes.TrimSpace(m["answers"])
			if a[0] != '{' {
				return errAt(file, line, "case %s: answers must be an object or null", id)
			}
			p.Answers = a
		}
		if p.Answers == nil && p.Error == "" {
			return errAt(file, line, "case %s: neither answers nor error; a prediction holds one of them", id)
		}
		preds = append(preds, p)
		return nil
	})
	sort.Strings(extra)
	return preds, extra, err
}

// Gates are jevassert's gates.yaml.
type Gates struct {
	MinAccuracy, MaxECE, MaxCostPerCase, MaxP95Latency, MinAccuracyCILower *float64
	CoverageAtPrecision                                                    *[2]float64 // precision, min coverage
	PerQuestion                                                            map[string][2]*float64
	perOrder                                                               []string
}

var gateKeys = []string{"min_accuracy", "max_ece", "max_cost_per_case_usd", "max_p95_latency_ms", "min_coverage_at_precision", "min_accuracy_ci_lower", "per_question"}

// ParseGates reads gates.yaml: only its own keys, all numbers (booleans
// refused), an empty file means no gates; per_question ids must be pack
// questions.
func ParseGates(file string, data []byte, pk *Pack) (*Gates, error) {
	p := &packParser{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, errAt(file, yamlLine(err), "invalid YAML: %v", err)
	}
	g := &Gates{}
	if len(doc.Content) == 0 || doc.Content[0].ShortTag() == "!!null" {
		return g, nil
	}
	num := func(n *yaml.Node, what string) *float64 {
		if n.ShortTag() != "!!int" && n.ShortTag() != "!!float" {
			p.fail(n, "%s must be a number", what)
			return nil
		}
		x, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			p.fail(n, "%s must be a number", what)
			return nil
		}
		return &x
	}
	for _, kv := range p.pairs(doc.Content[0], "gates.yaml") {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "min_accuracy":
			g.MinAccuracy = num(v, k.Value)
		case "max_ece":
			g.MaxECE = num(v, k.Value)
		case "max_cost_per_case_usd":
			g.MaxCostPerCase = num(v, k.Value)
		case "max_p95_latency_ms":
			g.MaxP95Latency = num(v, k.Value)
		case "min_accuracy_ci_lower":
			g.MinAccuracyCILower = num(v, k.Value)
		case "min_coverage_at_precision":
			var pr, mc *float64
			for _, e := range p.pairs(v, k.Value) {
				switch e[0].Value {
				case "precision":
					pr = num(e[1], "min_coverage_at_precision.precision")
				case "min_coverage":
					mc = num(e[1], "min_coverage_at_precision.min_coverage")
				default:
					p.fail(e[0], "min_coverage_at_precision has precision and min_coverage, not %q", e[0].Value)
				}
			}
			if pr != nil && mc != nil {
				g.CoverageAtPrecision = &[2]float64{*pr, *mc}
			} else if len(p.errs) == 0 {
				p.fail(v, "min_coverage_at_precision needs precision and min_coverage")
			}
		case "per_question":
			g.PerQuestion = map[string][2]*float64{}
			for _, e := range p.pairs(v, k.Value) {
				qid := e[0].Value
				if pk != nil && pk.Question(qid) == nil {
					p.fail(e[0], "per_question: no question %q in the pack", qid)
					continue
				}
				var pair [2]*float64
				for _, f := range p.pairs(e[1], "per_question."+qid) {
					switch f[0].Value {
					case "min_accuracy":
						pair[0] = num(f[1], "per_question."+qid+".min_accuracy")
					case "max_ece":
						pair[1] = num(f[1], "per_question."+qid+".max_ece")
					default:
						p.fail(f[0], "per_question.%s has min_accuracy and max_ece, not %q", qid, f[0].Value)
					}
				}
				g.PerQuestion[qid] = pair
				g.perOrder = append(g.perOrder, qid)
			}
		default:
			p.fail(k, "unknown gate %q (gates are %s)", k.Value, strings.Join(gateKeys, ", "))
		}
	}
	if len(p.errs) > 0 {
		return nil, joinErrs(p.errs)
	}
	return g, nil
}

func joinErrs(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%s", strings.Join(msgs, "\n"))
}

// PackOptions tune a pack import.
type PackOptions struct {
	// Recordings are jevassert prediction files to import as recorded
	// runs (each with its -rN repeats); empty imports dir/predictions.jsonl
	// as fixtures only, when present.
	Recordings []string
	// Runs asks for the recordings to become stored runs.
	Runs bool
}

// ImportPack reads a jev-packs pack folder (pack.yaml, cases.jsonl and,
// when present, gates.yaml and predictions.jsonl) into a folder: the
// questions in pack order as jevassert sends them, cases.jsonl as it is
// with a dataset: mapping (expect.* labels, score level names to indices),
// thresholds and gates where jevlab has a slot, and each recording as
// recorded exchanges (fixtures) whose requests are rebuilt from the pack.
func ImportPack(dir string, opt PackOptions) (*Folder, error) {
	pk, err := LoadPack(dir)
	if err != nil {
		return nil, err
	}
	casesFile := filepath.Join(dir, "cases.jsonl")
	casesData, err := readFile(casesFile, "jev-packs cases")
	if err != nil {
		return nil, fmt.Errorf("jev-packs: %w", err)
	}
	cases, err := pk.LoadCases(casesFile, casesData)
	if err != nil {
		return nil, err
	}
	f := &Folder{Set: pk.Set(), Files: map[string][]byte{"cases.jsonl": casesData}, Source: dir, Format: "jev-packs"}
	set := f.Set
	if len(cases) > 0 {
		set.State = cases[0].State
	}
	set.Dataset = "cases.jsonl"
	m := &questionset.DatasetMapping{}
	for _, q := range pk.Questions {
		lm := questionset.LabelMapping{Question: q.ID, Field: "expect." + q.ID}
		if q.Type == provider.Score {
			vals := map[string]string{}
			for i, l := range q.Levels {
				vals[l] = strconv.Itoa(i)
			}
			lm = questionset.NewLabelMapping(q.ID, lm.Field, q.Levels, vals)
		}
		m.Labels = append(m.Labels, lm)
	}
	set.DatasetMap = m
	f.packNotes(pk, dir)
	f.thresholds(pk)
	if gp := filepath.Join(dir, "gates.yaml"); exists(gp) {
		data, err := readFile(gp, "jevassert gates")
		if err != nil {
			return nil, err
		}
		g, err := ParseGates(gp, data, pk)
		if err != nil {
			return nil, err
		}
		f.gates(g)
	}
	recs := opt.Recordings
	if len(recs) == 0 {
		if p := filepath.Join(dir, "predictions.jsonl"); exists(p) {
			recs = []string{p}
		}
	}
	if err := f.recordings(pk, cases, recs, opt.Runs); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *Folder) note(format string, args ...any) {
	f.Notes = append(f.Notes, fmt.Sprintf(format, args...))
}

func (f *Folder) packNotes(pk *Pack, dir string) {
	f.note("pack %s %s (jev-packs spec %d, license %s): %s", pk.ID, pk.Version, pk.Spec, pk.License, strings.TrimSpace(pk.Description))
	f.note("state: %s (fields %s)", pk.StateDesc, strings.Join(pk.StateFields, ", "))
	if pk.Tested == "" {
		f.note("tested: null (no evidence recorded); the model requested is jev-latest, as jevassert's default")
	} else {
		f.note("tested: %s, requested as the set's model, as jevassert's default", pk.Tested)
	}
	for _, q := range pk.Questions {
		if q.Type != provider.Score {
			continue
		}
		var pairs []string
		for i, l := range q.Levels {
			pairs = append(pairs, fmt.Sprintf("%d %s", i, l))
		}
		f.note("%s: the level labels live only beside the wire criteria (sent as the descriptions): %s; the dataset mapping reads them", q.ID, strings.Join(pairs, ", "))
	}
	var docs []string
	for _, n := range []string{"README.md", "CHANGELOG.md", "evidence.md"} {
		if exists(filepath.Join(dir, n)) {
			docs = append(docs, n)
		}
	}
	if len(docs) > 0 {
		f.note("not imported (documentation): %s", strings.Join(docs, ", "))
	}
}

// thresholds keeps a pack's per-label floors where jevlab has a slot: a
// choice or score question whose labels (other than unknown) share one
// floor gets it as min_confidence; every floor is named in a note.
func (f *Folder) thresholds(pk *Pack) {
	for _, q := range pk.Questions {
		floors := pk.Thresholds[q.ID]
		if len(floors) == 0 {
			continue
		}
		var parts []string
		uniform := true
		for _, fl := range floors {
			parts = append(parts, fmt.Sprintf("%s ≥ %s", fl.Label, strconv.FormatFloat(fl.Min, 'f', -1, 64)))
			if fl.Min != floors[0].Min {
				uniform = false
			}
		}
		var unfloored []string
		for _, l := range q.labels() {
			found := false
			for _, fl := range floors {
				found = found || fl.Label == l
			}
			if !found {
				unfloored = append(unfloored, l)
			}
		}
		msg := fmt.Sprintf("thresholds.%s (jevassert's auto-accept floors on the decision's probability): %s", q.ID, strings.Join(parts, ", "))
		if len(unfloored) > 0 {
			msg += fmt.Sprintf("; %s always go to review", strings.Join(unfloored, ", "))
		}
		switch {
		case q.Type == provider.Noul:
			msg += "; jevlab has no acceptance floor for a noul (its threshold is the decision cut), so it is kept only here"
		case uniform:
			v := floors[0].Min
			if set := f.Set; set.Settings == nil {
				set.Settings = map[string]questionset.Settings{}
			}
			f.Set.Settings[q.ID] = questionset.Settings{MinConfidence: &v}
			msg += fmt.Sprintf("; kept as min_confidence %s", strconv.FormatFloat(v, 'f', -1, 64))
			if q.Type == provider.Score {
				msg += " (jevlab routes a score on the answer's confidence field, jevassert on the top level's probability)"
			}
			if len(unfloored) > 0 {
				msg += fmt.Sprintf("; jevlab routes %s by the same floor", strings.Join(unfloored, ", "))
			}
		default:
			msg += "; the floors differ by label, which jevlab's single min_confidence cannot hold, so they are kept only here"
		}
		f.note("%s", msg)
	}
}

// gates maps jevassert's gates onto jevlab's where a slot exists.
func (f *Folder) gates(g *Gates) {
	set := f.Set
	add := func(id string, minAcc, maxECE *float64) {
		if minAcc == nil && maxECE == nil {
			return
		}
		if set.Gates == nil {
			set.Gates = map[string]questionset.Gate{}
		}
		gt := set.Gates[id]
		if minAcc != nil {
			gt.MinAccuracy = minAcc
		}
		if maxECE != nil {
			gt.MaxECE = maxECE
		}
		set.Gates[id] = gt
	}
	if g.MinAccuracy != nil || g.MaxECE != nil {
		add("*", g.MinAccuracy, g.MaxECE)
		f.note(`gates.yaml min_accuracy/max_ece are pooled over all questions in jevassert; jevlab gates each question ("*"), which is stricter`)
	}
	for _, id := range g.perOrder {
		add(id, g.PerQuestion[id][0], g.PerQuestion[id][1])
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	if g.MaxCostPerCase != nil {
		f.note("gate max_cost_per_case_usd %s has no jevlab gate (the cost is in every report)", num(*g.MaxCostPerCase))
	}
	if g.MaxP95Latency != nil {
		f.note("gate max_p95_latency_ms %s has no jevlab gate (p95 latency is in every report)", num(*g.MaxP95Latency))
	}
	if g.CoverageAtPrecision != nil {
		f.note("gate min_coverage_at_precision {precision %s, min_coverage %s} has no jevlab gate (the accuracy–coverage curve is in every report)", num(g.CoverageAtPrecision[0]), num(g.CoverageAtPrecision[1]))
	}
	if g.MinAccuracyCILower != nil {
		f.note("gate min_accuracy_ci_lower %s has no jevlab gate (accuracy intervals are in every report)", num(*g.MinAccuracyCILower))
	}
}

var roundName = regexp.MustCompile(`^(.*)-r([0-9]+)\.jsonl$`)

// recordingName is the fixture file a recording becomes.
func recordingName(base string) string {
	name := strings.TrimSuffix(base, ".jsonl")
	switch {
	case name == "predictions":
		return "recorded.jsonl"
	case strings.HasPrefix(name, "predictions-"):
		return "recorded-" + strings.TrimPrefix(name, "predictions-") + ".jsonl"
	}
	return "recorded-" + name + ".jsonl"
}

// recordings converts each prediction file into fixtures and, with runs,
// groups them into runs: F-rK.jsonl beside F.jsonl is round K of F's run.
func (f *Folder) recordings(pk *Pack, cases []Case, files []string, runs bool) error {
	byID := map[string]*Case{}
	for i := range cases {
		byID[cases[i].ID] = &cases[i]
	}
	type rec struct {
		path  string
		preds []Prediction
		round int
		base  string
	}
	var all []*rec
	names := map[string]bool{}
	for _, p := range files {
		data, err := readFile(p, "jevassert recording")
		if err != nil {
			return fmt.Errorf("jevassert: %w", err)
		}
		preds, extra, err := LoadPredictions(p, data)
		if err != nil {
			return err
		}
		if len(extra) > 0 {
			f.note("%s: keys jevassert does not write were dropped: %s", filepath.Base(p), strings.Join(extra, ", "))
		}
		r := &rec{path: p, preds: preds, base: filepath.Base(p), round: 1}
		names[filepath.Base(p)] = true
		all = append(all, r)
	}
	for _, r := range all {
		if m := roundName.FindStringSubmatch(r.base); m != nil && names[m[1]+".jsonl"] {
			r.round, _ = strconv.Atoi(m[2])
			r.base = m[1] + ".jsonl"
		}
	}
	model := pk.Tested
	if model == "" {
		model = provider.DefaultModel
	}
	for _, r := range all {
		name := recordingName(filepath.Base(r.path))
		shuffled := strings.Contains(strings.ToLower(filepath.Base(r.path)), "shuffle")
		var b bytes.Buffer
		missing, extra, errs := 0, 0, 0
		seen := map[string]bool{}
		models := map[string]int{}
		for _, p := range r.preds {
			c, ok := byID[p.CaseID]
			if !ok {
				extra++
				continue
			}
			seen[p.CaseID] = true
			if p.Error != "" || p.Answers == nil {
				errs++
				continue
			}
			models[p.Model]++
			writeExchange(&b, f.Set, model, c, &p, shuffled, pk)
		}
		for _, c := range cases {
			if !seen[c.ID] {
				missing++
			}
		}
		f.Files[name] = b.Bytes()
		f.Set.Fixtures = append(f.Set.Fixtures, name)
		var parts []string
		parts = append(parts, fmt.Sprintf("%s → %s: %s; requests rebuilt from the pack (model %s as jevassert's default, marked uncertain)", filepath.Base(r.path), name, plural(len(r.preds)-errs-extra, "exchange"), model))
		if errs > 0 {
			parts = append(parts, fmt.Sprintf("%s are not replayable and left out (a stored run keeps them as failed items)", plural(errs, "error line")))
		}
		if extra > 0 {
			parts = append(parts, fmt.Sprintf("%s not in cases.jsonl skipped", plural(extra, "case")))
		}
		if missing > 0 {
			parts = append(parts, fmt.Sprintf("%s not recorded", plural(missing, "case")))
		}
		if shuffled {
			parts = append(parts, "recorded with --shuffle-options: the seed and the option order sent are not recorded, so the request's choice criteria are written in pack order and marked uncertain")
		}
		for m := range models {
			if pk.Tested != "" && m != pk.Tested {
				parts = append(parts, fmt.Sprintf("answered by %s, not the pack's tested %s", m, pk.Tested))
			}
		}
		parts = append(parts, "jevassert keeps only model, usage and answers of a response, and latency_ms is the last attempt's")
		f.note("%s", strings.Join(parts, "; "))
	}
	if !runs {
		return nil
	}
	// Rounds in order, each run's rounds checked against its first.
	var bases []string
	for _, r := range all {
		if !contains(bases, r.base) {
			bases = append(bases, r.base)
		}
	}
	for _, base := range bases {
		var rounds []*rec
		for _, r := range all {
			if r.base == base {
				rounds = append(rounds, r)
			}
		}
		sort.SliceStable(rounds, func(i, j int) bool { return rounds[i].round < rounds[j].round })
		if rounds[0].round != 1 {
			return fmt.Errorf("jevassert: %s is a repeat round but %s is not given", rounds[0].path, base)
		}
		run := Run{Name: strings.TrimSuffix(base, ".jsonl"), Model: model}
		first := map[string]bool{}
		for _, p := range rounds[0].preds {
			first[p.CaseID] = true
		}
		for k, r := range rounds {
			if k > 0 && r.round == rounds[k-1].round {
				return fmt.Errorf("jevassert: %s and %s are both round %d of %s", rounds[k-1].path, r.path, r.round, base)
			}
			var recs []Record
			for _, p := range r.preds {
				if _, ok := byID[p.CaseID]; !ok {
					continue
				}
				if k > 0 && !first[p.CaseID] {
					return errAt(r.path, p.Line, "case %s is not in round 1 (%s); a repeat asks the same cases", p.CaseID, base)
				}
				rc := Record{ItemID: p.CaseID, Model: p.Model, LatencyMS: p.LatencyMS, InputTokens: -1, OutputTokens: -1, Answers: p.Answers, Error: p.Error, Line: p.Line}
				if p.Usage != nil {
					rc.InputTokens, rc.OutputTokens = p.Usage.InputTokens, p.Usage.OutputTokens
				}
				recs = append(recs, rc)
			}
			run.Rounds = append(run.Rounds, recs)
		}
		if len(rounds) > 1 {
			run.Notes = append(run.Notes, fmt.Sprintf("%d rounds stored as repeats", len(rounds)))
		}
		f.Runs = append(f.Runs, run)
	}
	return nil
}

// writeExchange appends one recorded exchange, request rebuilt from the
// pack as jevassert sends it, answers verbatim.
func writeExchange(b *bytes.Buffer, set *questionset.Set, model string, c *Case, p *Prediction, shuffled bool, pk *Pack) {
	b.WriteString(`{"id": `)
	b.Write(provider.String(c.ID))
	b.WriteString(`, "request": {"model": `)
	b.Write(provider.String(model))
	b.WriteString(`, "state": `)
	b.Write(c.State)
	b.WriteString(`, "questions": `)
	qj, _ := set.Questions.MarshalJSON() // the wire questions only, no caller-side settings
	b.Write(qj)
	b.WriteString(`}, "response": {"model": `)
	b.Write(provider.String(p.Model))
	b.WriteString(`, "answers": `)
	b.Write(p.Answers)
	if p.Usage != nil {
		fmt.Fprintf(b, `, "usage": {"input_tokens": %d, "output_tokens": %d}`, p.Usage.InputTokens, p.Usage.OutputTokens)
	}
	b.WriteString(`}`)
	if p.LatencyRaw != nil {
		b.WriteString(`, "latency_ms": `)
		b.Write(p.LatencyRaw)
	}
	b.WriteString(`, "uncertain": ["/request/model"`)
	if shuffled {
		for _, q := range pk.Questions {
			if q.Type == provider.Choice {
				b.WriteString(`, "/request/questions/` + strings.ReplaceAll(strings.ReplaceAll(q.ID, "~", "~0"), "/", "~1") + `/criteria"`)
			}
		}
	}
	b.WriteString("]}\n")
}
