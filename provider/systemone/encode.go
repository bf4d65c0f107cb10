package systemone

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"

	"github.com/jevlab/jevlab/provider"
)

// maxCachedQuestions bounds the encoder's cache; it is emptied when full.
const maxCachedQuestions = 4096

// encoder validates and encodes requests, remembering for each question
// (by address) a private copy of what it last validated there and its wire
// JSON. A question set asked over many states — a batch run, a benchmark, a
// workbench re-asking after a state edit — is then validated and encoded
// once: a later request reuses a question's JSON only when the question
// still equals the copy field by field, so editing a question in place is
// always seen. Anything unusual goes to provider's own ValidateWith, which
// decides and words every error.
type encoder struct {
	limits provider.Limits
	mu     sync.Mutex
	m      map[*provider.Question]*qentry
	last   *lastBody // the last body built, reused for an identical request
}

// lastBody remembers one encoded request: a request with the same model,
// state bytes, ids and cache entries has the same body. Bodies are never
// modified after they are built, so sharing one is safe.
type lastBody struct {
	model string
	state []byte // private copy
	ids   []string
	ents  []*qentry
	body  []byte
}

func (l *lastBody) matches(req *provider.Request, ents []*qentry) bool {
	if l == nil || l.model != req.Model || len(l.ents) != len(ents) || !bytes.Equal(l.state, req.State) {
		return false
	}
	for i := range ents {
		if l.ents[i] != ents[i] || l.ids[i] != req.Questions[i].ID {
			return false
		}
	}
	return true
}

type qentry struct {
	copy provider.Question // private deep copy of the validated question
	json []byte            // its wire JSON
}

func newEncoder(lim provider.Limits) *encoder {
	return &encoder{limits: lim, m: make(map[*provider.Question]*qentry)}
}

// encode validates req and returns its wire body. The body may be shared
// with earlier calls and must not be modified.
func (e *encoder) encode(req *provider.Request) ([]byte, error) {
	n := len(req.Questions)
	if req.Model == "" || n == 0 || dupIDs(req.Questions) || req.NeedsImages() {
		return e.slow(req) // images and box questions: validated whole every time
	}
	var small [16]*qentry
	ents := small[:0]
	if n > len(small) {
		ents = make([]*qentry, 0, n)
	}
	e.mu.Lock()
	for i := range req.Questions {
		q := &req.Questions[i].Question
		ent := e.m[q]
		if ent == nil || !sameQuestion(q, &ent.copy) {
			break
		}
		ents = append(ents, ent)
	}
	last := e.last
	e.mu.Unlock()
	if len(ents) == n && last.matches(req, ents) {
		return last.body, nil // the state was validated when this body was built
	}
	if !stateOK(req.State) {
		return e.slow(req)
	}
	if len(ents) < n {
		if err := req.ValidateWith(e.limits); err != nil {
			return nil, err
		}
		ents = ents[:0]
		fresh := make([]*qentry, n)
		for i := range req.Questions {
			q := &req.Questions[i].Question
			js, _ := q.MarshalJSON()
			fresh[i] = &qentry{copy: q.Clone(), json: js}
			ents = append(ents, fresh[i])
		}
		e.mu.Lock()
		if len(e.m)+n > maxCachedQuestions {
			clear(e.m)
		}
		for i := range req.Questions {
			e.m[&req.Questions[i].Question] = fresh[i]
		}
		e.mu.Unlock()
	}

	size := len(`{"model":,"state":,"questions":{}}`) + stringLen(req.Model) + len(req.State)
	for i, ent := range ents {
		if i > 0 {
			size++
		}
		size += stringLen(req.Questions[i].ID) + 1 + len(ent.json)
	}
	max := e.limits.MaxRequestBytes
	if max <= 0 {
		max = provider.DefaultMaxRequestBytes
	}
	if size > max {
		return e.slow(req)
	}
	b := make([]byte, 0, size)
	b = append(b, `{"model":`...)
	b = appendString(b, req.Model)
	b = append(b, `,"state":`...)
	b = append(b, req.State...)
	b = append(b, `,"questions":{`...)
	for i, ent := range ents {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, req.Questions[i].ID)
		b = append(b, ':')
		b = append(b, ent.json...)
	}
	b = append(b, "}}"...)
	memo := &lastBody{model: req.Model, state: bytes.Clone(req.State), ids: make([]string, n), ents: slices.Clone(ents), body: b}
	for i := range req.Questions {
		memo.ids[i] = req.Questions[i].ID
	}
	e.mu.Lock()
	e.last = memo
	e.mu.Unlock()
	return b, nil
}

// slow validates with provider's rules, which decide and word every
// error; when they pass (the fast checks were only cautious) it encodes the
// request without the cache.
func (e *encoder) slow(req *provider.Request) ([]byte, error) {
	if err := req.ValidateWith(e.limits); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(req.Size())
	req.AppendJSON(&b)
	return b.Bytes(), nil
}

// stateOK is the fast accept for a state: a string, object or array that is
// valid JSON.
func stateOK(v json.RawMessage) bool {
	if len(v) == 0 {
		return false
	}
	switch v[0] {
	case '"', '{', '[':
		return provider.ValidJSON(v)
	}
	return false
}

func dupIDs(qs provider.Questions) bool {
	if len(qs) > 16 {
		seen := make(map[string]struct{}, len(qs))
		for i := range qs {
			if _, ok := seen[qs[i].ID]; ok {
				return true
			}
			seen[qs[i].ID] = struct{}{}
		}
		return false
	}
	for i := range qs {
		for j := 0; j < i; j++ {
			if qs[i].ID == qs[j].ID {
				return true
			}
		}
	}
	return false
}

// sameRaw compares raw slots, telling nil (absent) from empty.
func sameRaw(a, b json.RawMessage) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

// sameQuestion reports whether q equals the private copy c in every field
// validation and encoding read.
func sameQuestion(q, c *provider.Question) bool {
	if q.Type != c.Type || len(q.Options) != len(c.Options) || len(q.Levels) != len(c.Levels) || !sameRaw(q.Instructions, c.Instructions) {
		return false
	}
	for i := range q.Options {
		if q.Options[i].Label != c.Options[i].Label || !sameRaw(q.Options[i].Description, c.Options[i].Description) {
			return false
		}
	}
	for i := range q.Levels {
		if !sameRaw(q.Levels[i], c.Levels[i]) {
			return false
		}
	}
	return true
}

// stringLen and appendString encode a JSON string as provider does
// (encoding/json escaping without HTML escaping).
func stringLen(s string) int {
	if plainASCII(s) {
		return len(s) + 2
	}
	return len(provider.String(s))
}

func appendString(b []byte, s string) []byte {
	if plainASCII(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	return append(b, provider.String(s)...)
}

func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
