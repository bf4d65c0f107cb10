package standin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/jevlab/jevlab/provider"
)

// response is a complete 200 body (or an error body) with the byte span of
// each answer entry, so a fault can drop one without re-encoding.
type response struct {
	body  []byte
	spans [][2]int
}

// withoutAnswer returns the body with one answer entry removed; pick in
// [0,1) selects which.
func (r *response) withoutAnswer(pick float64) []byte {
	if len(r.spans) == 0 {
		return r.body
	}
	i := int(pick * float64(len(r.spans)))
	if i >= len(r.spans) {
		i = len(r.spans) - 1
	}
	a, b := r.spans[i][0], r.spans[i][1]
	switch {
	case len(r.spans) == 1:
	case i > 0:
		a-- // the comma before
	default:
		b++ // the comma after
	}
	out := make([]byte, 0, len(r.body)-(b-a))
	out = append(out, r.body[:a]...)
	return append(out, r.body[b:]...)
}

// answer decodes, validates and answers one request body. It returns the
// response and http.StatusOK, or an error body with 422 (statusUnrecorded
// for questions that are not recorded).
func (s *Server) answer(body []byte, dz provider.DangerZone) (*response, int) {
	// Requests with Danger-Zone headers are validated every time: the same
	// body may be valid with the header and not without.
	cacheable := len(body) <= maxCachedBody && (s.cfg.Fragile == nil || s.cfg.Fragile.RepeatNoise == 0) && dz == (provider.DangerZone{})
	if cacheable {
		s.cacheMu.RLock()
		c, ok := s.cache[string(body)]
		s.cacheMu.RUnlock()
		if ok {
			return c, http.StatusOK
		}
	}
	var req provider.Request
	// UnmarshalJSON validates as it splits; only on failure is the body run
	// through json.Unmarshal, whose *json.SyntaxError carries the offset.
	if err := req.UnmarshalJSON(body); err != nil {
		if err2 := json.Unmarshal(body, &req); err2 != nil {
			err = err2
		}
		return &response{body: detailBody(decodeDetails(body, err))}, http.StatusUnprocessableEntity
	}
	req.DangerZone = dz
	if err := req.ValidateWith(s.cfg.Limits); err != nil {
		return &response{body: detailBody(validationDetails(&req, err))}, http.StatusUnprocessableEntity
	}
	if r, status, refused := s.jev114(&req, body); refused {
		return r, status
	}

	answers := make([]json.RawMessage, len(req.Questions))
	var missing []string
	model := ""
	synthetic := false
	fullExchange := -1 // the exchange every answer came from, if one did
	for i := range req.Questions {
		q := &req.Questions[i].Question
		if len(s.index) > 0 {
			if rec, ok := s.index[provider.KeyForRequest(&req, q)]; ok {
				answers[i] = rec.answer
				if model == "" {
					model = rec.model
				}
				if i == 0 {
					fullExchange = rec.exchange
				} else if fullExchange != rec.exchange {
					fullExchange = -2
				}
				continue
			}
		}
		fullExchange = -2
		if !s.cfg.Synthetic {
			missing = append(missing, req.Questions[i].ID)
			continue
		}
		synthetic = true
	}
	if len(missing) > 0 {
		return &response{body: detailBody(unrecordedDetails(req.Model, missing))}, statusUnrecorded
	}
	if synthetic {
		model = SyntheticModel
		var sy *synthesizer
		if s.cfg.Fragile != nil {
			fr := s.fragileFor(req.State)
			sy = s.synthesizer(fr.state)
			sy.fr = fr
		} else {
			sy = s.synthesizer(req.State)
		}
		defer sy.release()
		for i := range req.Questions {
			if answers[i] == nil {
				answers[i] = sy.answer(&req.Questions[i].Question, s.cfg.Seed)
			}
		}
	}
	usage := provider.Usage{InputTokens: int64(len(body)/4 + 1)}
	if fullExchange >= 0 && s.exchanges[fullExchange].questions == len(req.Questions) {
		usage = s.exchanges[fullExchange].usage
	}

	n := 64 + len(model)
	for i := range answers {
		n += len(answers[i]) + len(req.Questions[i].ID) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, `{"model":`...)
	b = appendString(b, model)
	b = append(b, `,"answers":{`...)
	spans := make([][2]int, len(answers))
	for i := range answers {
		if i > 0 {
			b = append(b, ',')
		}
		start := len(b)
		b = appendString(b, req.Questions[i].ID)
		b = append(b, ':')
		b = append(b, answers[i]...)
		spans[i] = [2]int{start, len(b)}
	}
	b = append(b, `},"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, usage.InputTokens, 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, usage.OutputTokens, 10)
	b = append(b, `}}`...)
	resp := &response{body: b, spans: spans}

	if cacheable {
		s.cacheMu.Lock()
		if len(s.cache) >= maxCacheEntries {
			clear(s.cache)
		}
		s.cache[string(body)] = resp
		s.cacheMu.Unlock()
	}
	return resp, http.StatusOK
}

// detail is one FastAPI validation entry.
type detail struct {
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}

func detailBody(ds []detail) []byte {
	b, err := json.Marshal(struct {
		Detail []detail `json:"detail"`
	}{ds})
	if err != nil { // cannot happen: strings and ints only
		return []byte(`{"detail":[{"loc":["body"],"msg":"invalid request","type":"value_error"}]}`)
	}
	return b
}

func unrecordedDetails(model string, ids []string) []detail {
	ds := make([]detail, len(ids))
	for i, id := range ids {
		ds[i] = detail{
			Loc: []any{"body", "questions", id},
			Msg: fmt.Sprintf("not recorded: no fixture answers this question for model %q and this state; "+
				"record it against the live API, or run the stand-in with --synthetic", model),
			Type: "not_recorded",
		}
	}
	return ds
}

// decodeDetails maps a decoding failure to detail entries: invalid JSON is
// FastAPI's json_invalid at the byte offset; structural errors are located
// like validation errors.
func decodeDetails(body []byte, err error) []detail {
	var se *json.SyntaxError
	if errors.As(err, &se) || !json.Valid(body) {
		off := 0
		if se != nil {
			off = int(se.Offset)
		}
		return []detail{{Loc: []any{"body", off}, Msg: "JSON decode error", Type: "json_invalid"}}
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) || bytes.TrimSpace(body)[0] != '{' {
		return []detail{{Loc: []any{"body"}, Msg: "Input should be a valid dictionary or object to extract fields from", Type: "model_attributes_type"}}
	}
	return []detail{problemDetail(questionTypes(body), err)}
}

// questionTypes reads each question's type tag from a body that failed to
// decode, best effort, to locate errors the way TypeSafe does.
func questionTypes(body []byte) func(id string) string {
	var v struct {
		Questions map[string]struct {
			Type any `json:"type"`
		} `json:"questions"`
	}
	_ = json.Unmarshal(body, &v)
	return func(id string) string {
		if q, ok := v.Questions[id]; ok {
			if t, ok := q.Type.(string); ok && provider.QuestionType(t).Valid() {
				return t
			}
		}
		return ""
	}
}

// validationDetails maps each problem of a *provider.ValidationError to a
// detail entry.
func validationDetails(req *provider.Request, err error) []detail {
	typeOf := func(id string) string {
		if q, ok := req.Questions.Get(id); ok && q.Type.Valid() {
			return string(q.Type)
		}
		return ""
	}
	var ve *provider.ValidationError
	if !errors.As(err, &ve) {
		return []detail{problemDetail(typeOf, err)}
	}
	ds := make([]detail, 0, len(ve.Problems))
	for _, p := range ve.Problems {
		ds = append(ds, problemDetail(typeOf, p))
	}
	return ds
}

// problemDetail locates one problem. Question problems go under
// ["body","questions",ID,TYPE,...field] — the type tag is there because
// TypeSafe's question model is a tagged union — and request problems under
// ["body",field].
func problemDetail(typeOf func(string) string, err error) detail {
	var qe *provider.QuestionError
	var fe *provider.FieldError
	switch {
	case errors.As(err, &qe):
		loc := []any{"body", "questions", qe.ID}
		if !errors.As(qe.Err, &fe) {
			return detail{Loc: loc, Msg: qe.Err.Error(), Type: "value_error"}
		}
		if fe.Field == "type" && fe.Msg != "duplicate key" {
			t := "union_tag_invalid"
			if strings.HasPrefix(fe.Msg, "missing") {
				t = "union_tag_not_found"
			}
			return detail{Loc: loc, Msg: "type " + fe.Msg, Type: t}
		}
		if fe.Field == "id" {
			return detail{Loc: loc, Msg: fe.Msg, Type: "value_error"}
		}
		if tag := typeOf(qe.ID); tag != "" {
			loc = append(loc, tag)
		}
		return detail{Loc: append(loc, fieldPath(fe.Field)...), Msg: fe.Msg, Type: errType(fe.Msg)}
	case isFieldError(err):
		fe = err.(*provider.FieldError)
		loc := []any{"body"}
		if fe.Field != "request" {
			loc = append(loc, fieldPath(fe.Field)...)
		}
		return detail{Loc: loc, Msg: fe.Msg, Type: errType(fe.Msg)}
	case strings.HasPrefix(err.Error(), "questions: "):
		loc := []any{"body", "questions"}
		msg := strings.TrimPrefix(err.Error(), "questions: ")
		if errors.As(err, &fe) {
			loc, msg = append(loc, fe.Field), fe.Msg
		}
		return detail{Loc: loc, Msg: msg, Type: errType(msg)}
	case errors.As(err, &fe):
		loc := []any{"body"}
		if fe.Field != "request" {
			loc = append(loc, fieldPath(fe.Field)...)
		}
		return detail{Loc: loc, Msg: fe.Msg, Type: errType(fe.Msg)}
	}
	return detail{Loc: []any{"body"}, Msg: strings.TrimPrefix(err.Error(), "request: "), Type: "value_error"}
}

func isFieldError(err error) bool { _, ok := err.(*provider.FieldError); return ok }

func errType(msg string) string {
	if strings.HasPrefix(msg, "missing") {
		return "missing"
	}
	return "value_error"
}

// fieldPath splits a provider field path: "criteria.billing" →
// ["criteria","billing"] (a label may itself hold dots), "criteria[3]" →
// ["criteria",3].
func fieldPath(f string) []any {
	if rest, ok := strings.CutPrefix(f, "criteria."); ok {
		return []any{"criteria", rest}
	}
	if rest, ok := strings.CutPrefix(f, "criteria["); ok {
		if n, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil {
			return []any{"criteria", n}
		}
	}
	return []any{f}
}
