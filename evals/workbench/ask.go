package workbench

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/provider"
)

// Asked is the outcome of asking one state: the answers that came back
// (in request order), per-question failures, and the call's accounting
// summed over every request made.
type Asked struct {
	// Request is the request as sent (a copy: later edits of the set do
	// not change it).
	Request *provider.Request
	// Result holds the answers and accounting; on a per-question fallback
	// it sums the separate calls.
	Result *provider.Result
	// Failed maps question id to its error, for questions that could not
	// be answered while others were (an offline miss for an edited
	// question, a malformed answer).
	Failed map[string]error
	// Elapsed is the wall time of the whole ask.
	Elapsed time.Duration
}

// Request builds the request for state (nil: the set's working state) and
// the requested model (empty: the set's, else provider.DefaultModel),
// validated. The result is a deep copy, safe to send while the set is
// edited.
func Request(set *questionset.Set, state json.RawMessage, model string) (*provider.Request, error) {
	return RequestWith(set, state, model, nil)
}

// RequestWith is Request with variants vs asked beside their questions in
// the same request, each under its derived id (queue~v2).
func RequestWith(set *questionset.Set, state json.RawMessage, model string, vs []VariantRef) (*provider.Request, error) {
	return RequestFor(set, state, model, RequestOptions{Variants: vs}) // assets.go
}

// Ask sends req once. When the whole request fails because some questions
// have no recorded answer (offline) or came back malformed, each question
// is asked on its own so the others still answer; their errors are in
// Failed. Any other failure is returned as it is. This is the one ask the
// commands and the workbench share.
func Ask(ctx context.Context, p provider.Provider, req *provider.Request) (*Asked, error) {
	t0 := time.Now()
	res, err := p.Ask(ctx, req)
	out := &Asked{Request: req}
	if err == nil {
		out.Result, out.Elapsed = res, time.Since(t0)
		return out, nil
	}
	kind := provider.KindOf(err)
	if len(req.Questions) < 2 || ctx.Err() != nil || (kind != provider.KindMiss && kind != provider.KindMalformed) {
		return nil, err
	}
	out.Result = &provider.Result{}
	out.Failed = map[string]error{}
	models := map[string]bool{}
	for _, id := range req.Questions.IDs() {
		r, qerr := p.Ask(ctx, req.Subset([]string{id}))
		if qerr != nil {
			if ctx.Err() != nil {
				return nil, qerr
			}
			out.Failed[id] = qerr
			continue
		}
		out.Result.Answers = append(out.Result.Answers, r.Answers...)
		if r.Model != "" && !models[r.Model] {
			models[r.Model] = true
			if out.Result.Model != "" {
				out.Result.Model += "+"
			}
			out.Result.Model += r.Model
		}
		out.Result.Latency += r.Latency
		out.Result.Usage.InputTokens += r.Usage.InputTokens
		out.Result.Usage.OutputTokens += r.Usage.OutputTokens
		out.Result.CostUSD += r.CostUSD
		out.Result.Exchanges = append(out.Result.Exchanges, r.Exchanges...)
		if r.RequestID != "" {
			out.Result.RequestID = r.RequestID
		}
	}
	if len(out.Result.Answers) == 0 {
		return nil, err // nothing answered: the original error says it best
	}
	out.Elapsed = time.Since(t0)
	return out, nil
}

// DescribeError is a one-line, actionable description of a provider error
// for a question, the same in ask and the workbench.
func DescribeError(err error) string {
	switch provider.KindOf(err) {
	case provider.KindMiss:
		return "no recorded answer for this question as it is now (offline): record it with a key, or start the stand-in for synthetic answers"
	case provider.KindAuth:
		return "the provider refused the key: check $TYPESAFE_API_KEY"
	case provider.KindCanceled:
		return "cancelled"
	}
	return err.Error()
}
