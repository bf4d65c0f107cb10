package formats

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// ExportPack renders set as a jev-packs pack folder named dir: pack.yaml,
// cases.jsonl from the set's dataset, predictions.jsonl from its first
// fixture file (when it has one), README.md and CHANGELOG.md. It fails,
// naming the question, where the pack format cannot hold the set
// faithfully (a noul with criteria, a choice without unknown, a level with
// no snake_case label); what the pack cannot carry is returned as notes.
func ExportPack(set *questionset.Set, dir string) (map[string][]byte, []string, error) {
	id := filepath.Base(filepath.Clean(dir))
	if !kebab.MatchString(id) {
		return nil, nil, fmt.Errorf("the pack folder's name %q is the pack id and must be kebab-case (a-z, 0-9, single hyphens)", id)
	}
	var notes []string
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	levelNames := map[string]map[int]string{}
	if m := set.DatasetMap; m != nil {
		for _, l := range m.Labels {
			for k, v := range l.Values {
				if i, err := strconv.Atoi(v); err == nil {
					if levelNames[l.Question] == nil {
						levelNames[l.Question] = map[int]string{}
					}
					levelNames[l.Question][i] = k
				}
			}
		}
	}
	qsNode := mapping()
	levels := map[string][]string{}
	for _, e := range set.Questions {
		q := e.Question
		instr, ok := jsonString(q.Instructions)
		if !ok || instr == "" {
			return nil, nil, fmt.Errorf("question %s: jev-packs instructions are one string; this question's are %s", e.ID, q.Instructions)
		}
		if !snake.MatchString(e.ID) {
			return nil, nil, fmt.Errorf("question %s: a jev-packs question id is snake_case", e.ID)
		}
		qn := mapping()
		add(qn, "type", scalar(string(q.Type)))
		add(qn, "instructions", scalar(instr))
		switch q.Type {
		case provider.Noul:
			if len(q.Options) > 0 {
				return nil, nil, fmt.Errorf("question %s: a jev-packs noul has no criteria; this one has %d, which the pack cannot carry", e.ID, len(q.Options))
			}
		case provider.Choice:
			opts := mapping()
			hasUnknown := false
			for _, o := range q.Options {
				d, ok := jsonString(o.Description)
				if !ok || d == "" {
					return nil, nil, fmt.Errorf("question %s: option %s: a jev-packs option's meaning is a non-empty string, not %s", e.ID, o.Label, o.Description)
				}
				if !snake.MatchString(o.Label) {
					return nil, nil, fmt.Errorf("question %s: option %q: jev-packs labels are snake_case", e.ID, o.Label)
				}
				hasUnknown = hasUnknown || o.Label == "unknown"
				add(opts, o.Label, scalar(d))
			}
			if !hasUnknown {
				return nil, nil, fmt.Errorf("question %s: a jev-packs choice must have an unknown option (Jev cannot abstain); add one to the set first", e.ID)
			}
			add(qn, "options", opts)
		case provider.Score:
			lv := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			desc := mapping()
			var names []string
			for i, l := range q.Levels {
				text, ok := jsonString(l)
				if !ok {
					return nil, nil, fmt.Errorf("question %s: level %d is structured (%s); a jev-packs level is a label with a text description", e.ID, i, l)
				}
				name := levelNames[e.ID][i]
				if name == "" && snake.MatchString(text) {
					name = text
				}
				if name == "" {
					return nil, nil, fmt.Errorf("question %s: level %d (%q) has no snake_case label; give the set a dataset: mapping with values {label: %d} or reword the level", e.ID, i, text, i)
				}
				names = append(names, name)
				lv.Content = append(lv.Content, scalar(name).Node)
				if text != name {
					add(desc, name, scalar(text))
				}
			}
			if !contains(names, "unknown") {
				return nil, nil, fmt.Errorf("question %s: a jev-packs score must have an unknown level", e.ID)
			}
			levels[e.ID] = names
			add(qn, "levels", lv)
			if len(desc.Content) > 0 {
				add(qn, "level_descriptions", desc)
			}
		}
		add(qsNode, e.ID, qn)
	}

	// Cases from the dataset.
	if set.Dataset == "" {
		return nil, nil, fmt.Errorf("the set names no dataset; a pack needs its cases")
	}
	// A pack goes to other people: it carries only files inside the set's
	// folder (a set cannot make export copy a file from elsewhere).
	dpath, err := set.DatasetPath(nil)
	if err != nil {
		return nil, nil, err
	}
	items, err := dataset.Load(dpath.Path, dataset.Options{}.ForSet(set), set)
	if err != nil {
		return nil, nil, err
	}
	var fields []string
	var cases bytes.Buffer
	byState := map[string]string{}
	for _, it := range items {
		var st map[string]json.RawMessage
		if json.Unmarshal(it.State, &st) != nil || st == nil {
			return nil, nil, fmt.Errorf("item %s: a jev-packs state is an object with the pack's fields, not %s", it.ID, kindWord(it.State))
		}
		keys := sortedRawKeys(st)
		if fields == nil {
			fields = orderedKeys(it.State)
		} else if !sameSet(keys, fields) {
			return nil, nil, fmt.Errorf("item %s: its state has %s, the first item's %s; a pack's states share one set of fields", it.ID, strings.Join(keys, ", "), strings.Join(fields, ", "))
		}
		for _, f := range keys {
			if !snake.MatchString(f) {
				return nil, nil, fmt.Errorf("item %s: state field %q is not snake_case", it.ID, f)
			}
		}
		cases.WriteString(`{"id": `)
		cases.Write(provider.String(it.ID))
		cases.WriteString(`, "state": `)
		cases.Write(it.State)
		cases.WriteString(`, "expect": {`)
		for i, e := range set.Questions {
			l, ok := it.Labels[e.ID]
			if !ok {
				return nil, nil, fmt.Errorf("item %s has no label for %s; a jev-packs case has one gold per question", it.ID, e.ID)
			}
			if i > 0 {
				cases.WriteString(", ")
			}
			cases.Write(provider.String(e.ID))
			cases.WriteString(": ")
			switch e.Question.Type {
			case provider.Noul:
				cases.WriteString(strconv.FormatBool(l.Index == 1))
			case provider.Choice:
				cases.Write(provider.String(l.Text))
			case provider.Score:
				cases.Write(provider.String(levels[e.ID][l.Index]))
			}
		}
		cases.WriteString("}}\n")
		byState[string(canonical(it.State))] = it.ID
	}

	files := map[string][]byte{"cases.jsonl": cases.Bytes()}
	tested := ""
	if len(set.Fixtures) > 0 {
		fx, err := set.FixturePaths(nil)
		if err != nil {
			return nil, nil, err
		}
		preds, models, n, err := predictionsFrom(fx[0].Path, byState)
		if err != nil {
			return nil, nil, err
		}
		files["predictions.jsonl"] = preds
		note("predictions.jsonl from %s: %d of %d items; the request bodies are not kept (jevassert stores none)", set.Fixtures[0], n, len(items))
		if len(models) == 1 {
			for m := range models {
				if jevID.MatchString(m) {
					tested = m
				}
			}
		}
		if len(set.Fixtures) > 1 {
			note("only the first fixture file is exported; %d more are not (a pack holds one recording)", len(set.Fixtures)-1)
		}
	}
	if tested != "" {
		note("tested is left null: a pack with tested set needs evidence.md (jevassert's report); the recording's model is %s", tested)
	}

	root := mapping()
	add(root, "spec", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "0"})
	add(root, "id", scalar(id))
	add(root, "version", scalar("0.1.0"))
	add(root, "license", scalar("NOASSERTION"))
	add(root, "tested", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"})
	add(root, "description", scalar(fmt.Sprintf("Exported from the jevlab question set %s. Non-goals: (to be written).", set.Title())))
	st := mapping()
	add(st, "description", scalar("(to be written)"))
	fl := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, f := range fields {
		fl.Content = append(fl.Content, scalar(f).Node)
	}
	add(st, "fields", fl)
	add(root, "state", st)
	add(root, "questions", qsNode)
	note("license is NOASSERTION and description and state.description are placeholders: fill them in before publishing")

	th := mapping()
	for _, e := range set.Questions {
		s, ok := set.Settings[e.ID]
		if !ok {
			continue
		}
		if s.Threshold != nil && *s.Threshold != questionset.DefaultThreshold {
			note("%s: threshold %g (the decision cut) has no slot in a pack", e.ID, *s.Threshold)
		}
		if s.MinConfidence == nil {
			continue
		}
		floors := mapping()
		var labels []string
		if e.Question.Type == provider.Choice {
			for _, o := range e.Question.Options {
				labels = append(labels, o.Label)
			}
		} else {
			labels = levels[e.ID]
		}
		for _, l := range labels {
			if l != "unknown" {
				add(floors, l, scalar(strconv.FormatFloat(*s.MinConfidence, 'f', -1, 64)).num())
			}
		}
		add(th, e.ID, floors)
		note("%s: min_confidence %g becomes a floor on every label but unknown (jevassert sends unknown to review)", e.ID, *s.MinConfidence)
	}
	if len(th.Content) > 0 {
		add(root, "thresholds", th)
	}
	var pb bytes.Buffer
	enc := yaml.NewEncoder(&pb)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, nil, err
	}
	files["pack.yaml"] = pb.Bytes()
	if g := packGates(set, &notes); g != nil {
		files["gates.yaml"] = g
	}
	files["README.md"] = []byte(fmt.Sprintf("# %s\n\nExported by jevlab from the question set %s (%d questions, %d cases).\n", id, set.Title(), len(set.Questions), len(items)))
	files["CHANGELOG.md"] = []byte("# Changelog\n\n## 0.1.0\n\n- Exported from jevlab.\n")
	// The pack must load back under its own rules.
	if _, err := ParsePack(filepath.Join(dir, "pack.yaml"), files["pack.yaml"], id); err != nil {
		return nil, nil, fmt.Errorf("the exported pack.yaml breaks spec v0: %w", err)
	}
	return files, notes, nil
}

func packGates(set *questionset.Set, notes *[]string) []byte {
	if len(set.Gates) == 0 {
		return nil
	}
	root := mapping()
	if g, ok := set.Gates["*"]; ok {
		if g.MinAccuracy != nil {
			add(root, "min_accuracy", scalar(strconv.FormatFloat(*g.MinAccuracy, 'f', -1, 64)).num())
		}
		if g.MaxECE != nil {
			add(root, "max_ece", scalar(strconv.FormatFloat(*g.MaxECE, 'f', -1, 64)).num())
		}
		*notes = append(*notes, `gates "*" become jevassert's pooled min_accuracy/max_ece (over all questions, not each)`)
	}
	pq := mapping()
	for _, e := range set.Questions {
		g, ok := set.Gates[e.ID]
		if !ok {
			continue
		}
		n := mapping()
		if g.MinAccuracy != nil {
			add(n, "min_accuracy", scalar(strconv.FormatFloat(*g.MinAccuracy, 'f', -1, 64)).num())
		}
		if g.MaxECE != nil {
			add(n, "max_ece", scalar(strconv.FormatFloat(*g.MaxECE, 'f', -1, 64)).num())
		}
		if len(n.Content) > 0 {
			add(pq, e.ID, n)
		}
	}
	if len(pq.Content) > 0 {
		add(root, "per_question", pq)
	}
	for id, g := range set.Gates {
		if g.MaxBrier != nil || g.MinMacroF1 != nil || g.MaxLogLoss != nil || g.MinWithinOne != nil || g.MaxErrorRate != nil {
			*notes = append(*notes, fmt.Sprintf("gates.%s: only min_accuracy and max_ece have a jevassert gate; the others are not exported", id))
		}
	}
	if len(root.Content) == 0 {
		return nil
	}
	out, err := yaml.Marshal(root)
	if err != nil {
		return nil
	}
	return out
}

// predictionsFrom converts recorded exchanges into jevassert prediction
// lines, pairing each with its case by state.
func predictionsFrom(path string, byState map[string]string) ([]byte, map[string]bool, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	var b bytes.Buffer
	models := map[string]bool{}
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var ex struct {
			Request struct {
				State json.RawMessage `json:"state"`
			} `json:"request"`
			Response struct {
				Model   string          `json:"model"`
				Answers json.RawMessage `json:"answers"`
				Usage   *provider.Usage `json:"usage"`
			} `json:"response"`
			LatencyMS json.RawMessage `json:"latency_ms"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
			return nil, nil, 0, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		id, ok := byState[string(canonical(ex.Request.State))]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		models[ex.Response.Model] = true
		b.WriteString(`{"case_id": `)
		b.Write(provider.String(id))
		b.WriteString(`, "model": `)
		b.Write(provider.String(ex.Response.Model))
		b.WriteString(`, "latency_ms": `)
		if len(ex.LatencyMS) > 0 && !isNull(ex.LatencyMS) {
			b.Write(ex.LatencyMS)
		} else {
			b.WriteString("null")
		}
		b.WriteString(`, "usage": `)
		if ex.Response.Usage != nil {
			fmt.Fprintf(&b, `{"input_tokens": %d, "output_tokens": %d}`, ex.Response.Usage.InputTokens, ex.Response.Usage.OutputTokens)
		} else {
			b.WriteString("null")
		}
		b.WriteString(`, "answers": `)
		b.Write(ex.Response.Answers)
		b.WriteString(`, "error": null}` + "\n")
	}
	return b.Bytes(), models, len(seen), sc.Err()
}

type ynode struct{ *yaml.Node }

func scalar(s string) ynode { return ynode{&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}} }

func (n ynode) num() *yaml.Node { n.Tag = "!!float"; return n.Node }

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func add(m *yaml.Node, k string, v any) {
	var vn *yaml.Node
	switch x := v.(type) {
	case ynode:
		vn = x.Node
	case *yaml.Node:
		vn = x
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, vn)
}

// orderedKeys lists an object's keys in written order.
func orderedKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var out []string
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		out = append(out, t.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return out
		}
	}
	return out
}

func kindWord(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		return "text"
	}
	return "an array"
}
