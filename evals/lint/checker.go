package lint

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// checker runs the warnings over one set and the states it sees.
type checker struct {
	set      *questionset.Set
	file     string
	loc      *locator
	opts     Options
	findings []Finding

	paths        []*pathRef
	states       int // states observed (working + dataset)
	objectStates int // of which objects
	containers   int // of which objects or arrays
	keys         map[string]bool
	sample       any       // the first object state, for suggestions
	worst        stateSize // the largest state seen
	qmax         int       // bytes of the longest question
	qmaxID       string
	qtotal       int // bytes of all questions, as sent
	idSet        map[string]bool
}

type stateSize struct {
	bytes int
	item  string // "" for the working state
}

func newChecker(set *questionset.Set, file string, loc *locator, opts Options) *checker {
	return &checker{set: set, file: file, loc: loc, opts: opts, keys: make(map[string]bool)}
}

func (c *checker) warn(id, question string, where []string, fix, format string, args ...any) {
	line, col := c.loc.at(question, where...)
	c.findings = append(c.findings, Finding{ID: id, Severity: SeverityWarning, File: c.file, Line: line, Col: col,
		Question: question, Message: fmt.Sprintf(format, args...), Fix: fix})
}

// static runs the checks that need only the set.
func (c *checker) static() {
	for _, e := range c.set.Questions {
		q := &e.Question
		b, _ := q.MarshalJSON()
		c.qtotal += len(e.ID) + 4 + len(b)
		if len(b) > c.qmax {
			c.qmax, c.qmaxID = len(b), e.ID
		}
		switch q.Type {
		case provider.Choice:
			c.noCatchAll(e.ID, q)
			c.duplicateOptions(e.ID, q)
		case provider.Score:
			c.nonOrdinal(e.ID, q)
			c.duplicateLevels(e.ID, q)
		case provider.Noul:
			c.negatedTrue(e.ID, q)
		case provider.Box:
			c.boxModel(e.ID) // box.go
		}
		c.doubleNegative(e.ID, q)
		c.numericTask(e.ID, q)
		c.collectPaths(e.ID, q)
	}
}

// ---- no-catch-all

var catchAllTokens = map[string]bool{
	"none": true, "other": true, "others": true, "unknown": true, "unsure": true, "neither": true,
	"na": true, "unclear": true, "irrelevant": true, "misc": true, "miscellaneous": true, "nothing": true,
	"unspecified": true, "undetermined": true, "unclassified": true, "uncertain": true, "fallback": true,
}

var catchAllPhrases = []string{"not_applicable", "no_match", "not_sure", "cannot_tell", "cant_tell", "not_mentioned",
	"not_listed", "none_of_the_above", "not_enough_information", "no_intent", "out_of_scope", "off_topic"}

var catchAllDescription = regexp.MustCompile(`(?i)\b(anything else|none of the (above|other|options)|something else|no other option|does not fit|doesn't fit|not covered by)\b`)

// isCatchAll reports whether an option label (or its description) reads as
// "none of the above".
func isCatchAll(o provider.Option) bool {
	norm := strings.ToLower(o.Label)
	norm = strings.NewReplacer("-", "_", " ", "_", "/", "_", "'", "", ".", "").Replace(norm)
	if norm == "n_a" {
		return true
	}
	for _, tok := range strings.Split(norm, "_") {
		if catchAllTokens[tok] {
			return true
		}
	}
	for _, p := range catchAllPhrases {
		if strings.Contains(norm, p) {
			return true
		}
	}
	return catchAllDescription.MatchString(provider.Text(o.Description))
}

func (c *checker) noCatchAll(id string, q *provider.Question) {
	for _, o := range q.Options {
		if isCatchAll(o) {
			return
		}
	}
	c.warn(IDNoCatchAll, id, []string{"criteria"},
		"add an option such as `other` or `none` (\"none of the above\") so Jev can decline every listed option",
		"no catch-all option among its %d options; when no option fits the state, Jev still has to pick one of them", len(q.Options))
}

// ---- non-ordinal-level

var nonOrdinal = regexp.MustCompile(`(?i)^\W*(unknown|n/?a|not applicable|does not apply|doesn't apply|irrelevant|cannot (be )?(tell|told|determined?|say)|can'?t (tell|determine|say)|can not tell|unable to (tell|determine|say)|not (enough|sufficient) (info|information|context|evidence)|insufficient (info|information|context|evidence)|no (info|information|data)|not (sure|mentioned|stated)|unsure|undetermined|unclear)\b`)

// levelText is the text a level is judged by: the string, a structured
// level's label or summary, else its whole text.
func levelText(l json.RawMessage) string {
	if len(l) > 0 && l[0] == '{' {
		var m map[string]json.RawMessage
		if json.Unmarshal(l, &m) == nil {
			for _, k := range []string{"label", "summary", "what", "description"} {
				if v, ok := m[k]; ok {
					if t := provider.Text(v); t != "" {
						return t
					}
				}
			}
		}
	}
	return provider.Text(l)
}

func (c *checker) nonOrdinal(id string, q *provider.Question) {
	for i, l := range q.Levels {
		t := levelText(l)
		m := nonOrdinal.FindString(t)
		if m == "" {
			continue
		}
		// "Unclear" alone is a non-answer; "Unclear request, …" may be the
		// bottom of a clarity ladder.
		if strings.HasPrefix(strings.ToLower(strings.TrimLeft(m, " \t\"'(")), "unclear") && strings.TrimRight(strings.ToLower(strings.TrimSpace(t)), ".!") != "unclear" {
			continue
		}
		c.warn(IDNonOrdinalLevel, id, []string{"criteria", strconv.Itoa(i)},
			"remove it from the ladder and ask a separate noul (\"Can this be told from the state?\") or a choice with an `unknown` option",
			"level %d of %d (%s) is not a point on the scale: a score's levels must be ordered, and its expected score mixes this level in as if it were %d",
			i, len(q.Levels), quote(t, 50), i)
	}
}

// ---- duplicate-description

func normText(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		return strings.Join(strings.Fields(strings.ToLower(provider.Text(raw))), " ")
	}
	return string(provider.Compact(raw))
}

func (c *checker) duplicateOptions(id string, q *provider.Question) {
	first := map[string]string{}
	for _, o := range q.Options {
		if o.Description == nil || provider.Text(o.Description) == "" {
			continue
		}
		key := normText(o.Description)
		if prev, ok := first[key]; ok {
			c.warn(IDDuplicateDesc, id, []string{"criteria", o.Label},
				fmt.Sprintf("say what distinguishes `%s` from `%s` (e.g. {what, not_for} with the same keys)", o.Label, prev),
				"options %q and %q have the same description (%s); Jev cannot tell them apart", prev, o.Label, quote(provider.Text(o.Description), 50))
			continue
		}
		first[key] = o.Label
	}
}

func (c *checker) duplicateLevels(id string, q *provider.Question) {
	first := map[string]int{}
	for i, l := range q.Levels {
		key := normText(l)
		if prev, ok := first[key]; ok {
			c.warn(IDDuplicateDesc, id, []string{"criteria", strconv.Itoa(i)},
				fmt.Sprintf("say what distinguishes level %d from level %d", i, prev),
				"levels %d and %d are the same (%s); Jev cannot tell them apart", prev, i, quote(provider.Text(l), 50))
			continue
		}
		first[key] = i
	}
}

// ---- negated-true

// negation finds a negation in the first clause of a text.
var negation = regexp.MustCompile(`(?i)(^|\W)(not|no|none|never|nothing|nobody|neither|cannot|can't|doesn't|don't|didn't|isn't|aren't|wasn't|weren't|hasn't|haven't|won't|shouldn't)(\W|$)`)

func firstClause(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, ",;:.!?(—\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// criterionText is the text of a criteria entry: the string, or a
// structured entry's "what".
func criterionText(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '{' {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			if v, ok := m["what"]; ok {
				return provider.Text(v)
			}
			return ""
		}
	}
	if len(raw) > 0 && raw[0] == '"' {
		return provider.Text(raw)
	}
	return ""
}

// negatedQuestion matches a question that asks about the absence of
// something: "Is it not…", "Does the message not…", "Isn't…".
var negatedQuestion = regexp.MustCompile(`(?i)^\W*((is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)n't\b|(is|are|was|were) there no\b|(is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\s+(\S+\s+){0,4}?(not|never|no longer)\b)`)

func (c *checker) negatedTrue(id string, q *provider.Question) {
	for _, o := range q.Options {
		if o.Label != "true" {
			continue
		}
		t := criterionText(o.Description)
		if m := negation.FindStringSubmatch(firstClause(t)); m != nil {
			c.warn(IDNegatedTrue, id, []string{"criteria", "true"},
				"rephrase so `true` states the positive case, and move the negative case to `false`",
				"its `true` criterion reads as a negation (%q in %s); wording where true means \"no\" performs worse (Jev failure modes 4 and 7)", strings.ToLower(m[2]), quote(t, 60))
		}
	}
	if q.Instructions == nil || q.Instructions[0] != '"' {
		return
	}
	t := provider.Text(q.Instructions)
	if negatedQuestion.MatchString(firstClause(t)) {
		c.warn(IDNegatedTrue, id, []string{"instructions"},
			"ask the positive question (e.g. \"Is it X?\" rather than \"Is it not X?\") and read the answer as 1 − p",
			"the question is negated (%s), so `true` means \"no\"; Jev does worse when true means no (failure modes 4 and 7)", quote(t, 60))
	}
}

// ---- double-negative

var doubleNegative = regexp.MustCompile(`(?i)\b(not|never|n't)\s+(\w+\s+){0,3}?(un\w+able|unlikely|uncommon|unusual|unclear|impossible|illegal|invalid|incorrect|never|no|none|nothing|not|without)\b`)

func (c *checker) doubleNegative(id string, q *provider.Question) {
	if m := firstMatch(q.Instructions, doubleNegative); m != "" {
		c.warn(IDDoubleNegative, id, []string{"instructions"},
			"state the condition positively (e.g. \"not uncommon\" → \"common\")",
			"the instructions contain a double negative (%q); double negatives lose accuracy (Jev failure mode 4)", m)
	}
}

// firstMatch returns re's first match in the strings of instructions (in
// walkStrings order), or "" when none matches or there are none.
func firstMatch(instructions json.RawMessage, re *regexp.Regexp) string {
	if instructions == nil {
		return ""
	}
	found := ""
	walkStrings(instructions, func(_ []string, s string) {
		if found == "" {
			found = re.FindString(s)
		}
	})
	return found
}

// ---- numeric-task

var numericTask = regexp.MustCompile(`(?i)\b(how many|count (the|of|how)|the number of|the total (number|amount|count|of)|sum of|add up|calculate|compute|the average|how much (time|money) (is|was|has|in total))\b`)

func (c *checker) numericTask(id string, q *provider.Question) {
	if m := firstMatch(q.Instructions, numericTask); m != "" {
		c.warn(IDNumericTask, id, []string{"instructions"},
			"count or compute in code, and ask Jev one noul per candidate (or a choice over ranges)",
			"the instructions ask Jev to count or compute (%q); it cannot count reliably (Jev failure mode 2)", m)
	}
}

// ---- unresolved-path

func (c *checker) collectPaths(id string, q *provider.Question) {
	// Keys of a structured instructions object may be referenced by name.
	local := map[string]bool{}
	if q.Instructions != nil && q.Instructions[0] == '{' {
		var m map[string]json.RawMessage
		if json.Unmarshal(q.Instructions, &m) == nil {
			for k := range m {
				local[k] = true
			}
		}
	}
	for _, o := range q.Options {
		local[o.Label] = true
	}
	isLocal := func(k string) bool { return local[k] || c.ids()[k] }
	seen := map[string]bool{}
	add := func(where []string, s string) {
		for _, m := range backticked.FindAllStringSubmatch(s, -1) {
			p := strings.TrimSpace(m[1])
			if seen[p] || literalWords[strings.ToLower(p)] {
				continue
			}
			ref := &pathRef{question: id, where: where, text: p}
			switch {
			case pathLike.MatchString(p):
				ref.dotted = true
				ref.segs = parsePath(p)
				if isLocal(ref.segs[0]) {
					continue
				}
			case identLike.MatchString(p):
				if isLocal(p) {
					continue
				}
				ref.segs = []string{p}
			default:
				continue
			}
			seen[p] = true
			c.paths = append(c.paths, ref)
		}
	}
	slot := func(raw json.RawMessage, where ...string) {
		walkStrings(raw, func(_ []string, s string) { add(where, s) })
	}
	if q.Instructions != nil {
		slot(q.Instructions, "instructions")
	}
	for _, o := range q.Options {
		slot(o.Description, "criteria", o.Label)
	}
	for i, l := range q.Levels {
		slot(l, "criteria", strconv.Itoa(i))
	}
}

// ids is the set of question ids, built once: every question's paths are
// checked against it, so building it per question made lint quadratic.
func (c *checker) ids() map[string]bool {
	if c.idSet == nil {
		c.idSet = make(map[string]bool, len(c.set.Questions))
		for _, e := range c.set.Questions {
			c.idSet[e.ID] = true
		}
	}
	return c.idSet
}

// observe takes one state (the working state or a dataset item's).
func (c *checker) observe(item string, state json.RawMessage) {
	if state == nil {
		return
	}
	c.states++
	if n := len(state); n > c.worst.bytes {
		c.worst = stateSize{n, item}
	}
	var pending bool
	for _, p := range c.paths {
		if !p.resolved {
			pending = true
			break
		}
	}
	if !pending {
		return
	}
	v := decode(state)
	switch v.(type) {
	case map[string]any:
		c.objectStates++
		c.containers++
	case []any:
		c.containers++
	}
	for _, p := range c.paths {
		if !p.resolved && resolvesIn(v, p.segs) {
			p.resolved = true
		}
	}
	if c.sample == nil {
		if _, ok := v.(map[string]any); ok {
			c.sample = v
		}
	}
	if len(c.keys) < 50 {
		if m, ok := v.(map[string]any); ok {
			for k := range m {
				c.keys[k] = true
			}
		}
	}
}

// finish reports what needs every state: paths and the token budget.
func (c *checker) finish() {
	for _, p := range c.paths {
		if p.resolved || c.states == 0 {
			continue
		}
		// A single identifier is only judged against object states: in a
		// text state a backticked word is just emphasis.
		if !p.dotted && c.objectStates == 0 {
			continue
		}
		if p.dotted && c.containers == 0 {
			continue
		}
		where := "the working state"
		if c.states > 1 {
			where = fmt.Sprintf("the working state or any of %d dataset states", c.states-1)
			if c.set.State == nil {
				where = fmt.Sprintf("any of the %d dataset states", c.states)
			}
		}
		keys := slices.Sorted(maps.Keys(c.keys))
		fix := "correct the path, or drop the backticks if it is not a state path"
		if s := suggest(c.sample, p.segs); s != "" {
			fix = fmt.Sprintf("did you mean `%s`? Correct the path, or drop the backticks if it is not a state path", s)
		} else if len(keys) > 0 {
			fix = fmt.Sprintf("correct the path (top-level state keys: %s), or drop the backticks if it is not a state path", strings.Join(limit(keys, 8), ", "))
		}
		c.warn(IDUnresolvedPath, p.question, p.where, fix,
			"`%s` does not resolve in %s; Jev will look for something that is not there (point at state paths directly: failure mode 4)", p.text, where)
	}
	c.tokenBudget()
}

func limit(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], "…")
}

// ---- token-budget

func (c *checker) tokenBudget() {
	if c.worst.bytes == 0 && c.qtotal == 0 {
		return
	}
	where := "the working state"
	if c.worst.item != "" {
		where = fmt.Sprintf("dataset item %q", c.worst.item)
	}
	req := len(`{"model":"","state":,"questions":{}}`) + len(c.set.ModelName()) + c.worst.bytes + c.qtotal
	if req > provider.DefaultMaxRequestBytes {
		line, col := c.loc.topField("questions")
		c.findings = append(c.findings, Finding{ID: IDLimits, Severity: SeverityError, File: c.file, Line: line, Col: col,
			Message: fmt.Sprintf("a request with %s is %d bytes serialized, over the %d-byte ceiling jevlab's client enforces; it would never be sent",
				where, req, provider.DefaultMaxRequestBytes),
			Fix: "shorten or filter the state, or split the questions across requests"})
	}
	if t := req / 4; t > c.opts.maxRequest() {
		line, col := c.loc.topField("questions")
		c.findings = append(c.findings, Finding{ID: IDTokenBudget, Severity: SeverityWarning, File: c.file, Line: line, Col: col,
			Message: fmt.Sprintf("a request with %s is approximately %d tokens (estimated as bytes/4, %d bytes); System One's budget is %d tokens per request (state + all questions)",
				where, t, req, c.opts.maxRequest()),
			Fix: "shorten or filter the state, or split the questions across requests"})
	}
	if t := (c.worst.bytes + c.qmax) / 4; c.qmaxID != "" && t > c.opts.maxStateAsk() {
		c.warn(IDTokenBudget, c.qmaxID, nil, "shorten or filter the state, or shorten this question's criteria",
			"%s plus this question (the longest) is approximately %d tokens (estimated as bytes/4); System One's budget is %d tokens for state + the longest question",
			where, t, c.opts.maxStateAsk())
	}
}

func quote(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return strconv.Quote(s)
}
