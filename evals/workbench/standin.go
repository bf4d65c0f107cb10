package workbench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/provider/standin"
	"github.com/jevlab/jevlab/provider/systemone"
)

// StandInModel is the model every stand-in answer is marked with; it can
// never be mistaken for a Jev version.
const StandInModel = standin.SyntheticModel

// StandInMode is the mode the workbench shows (and runs record) while the
// stand-in answers.
const StandInMode = "stand-in"

// standInBase is the base URL the stand-in's client is given. No socket is
// ever opened for it: the client's transport hands each request straight to
// the stand-in's handler in memory.
const standInBase = "http://127.0.0.1:1"

// StandInProvider answers what its primary provider has (recorded answers,
// a live key) and asks the in-process stand-in for the rest: synthetic
// answers under StandInModel, for this process only. Stand-in answers
// carry Source provider.SourceStandIn and no wire exchanges, so nothing
// downstream can write them to a fixture file as if Jev had said them.
type StandInProvider struct {
	primary provider.Provider
	srv     *standin.Server
	client  *systemone.Client
}

// StandIn starts the in-process stand-in (provider/standin's handler behind
// a provider/systemone client, connected by an in-memory transport: no
// network, not even loopback) in front of primary, which answers first;
// primary may be nil (every answer synthetic). version goes into the
// client's User-Agent. Close it when done.
func StandIn(primary provider.Provider, version string) (*StandInProvider, error) {
	srv, err := standin.New(standin.Config{Synthetic: true})
	if err != nil {
		return nil, fmt.Errorf("start the stand-in: %w", err)
	}
	c, err := systemone.New(systemone.Config{
		BaseURL:    standInBase,
		HTTPClient: &http.Client{Transport: handlerTransport{srv}},
		MaxRetries: -1,
		Version:    version,
	})
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("start the stand-in: %w", err)
	}
	return &StandInProvider{primary: primary, srv: srv, client: c}, nil
}

// Close stops the stand-in.
func (p *StandInProvider) Close() { p.srv.Close() }

// Ask answers req: the primary provider first; when it misses (no
// recording for an edited question, offline), the questions it can answer
// keep its answers and only the missing ones are asked of the stand-in.
// Any other failure of the primary is returned as it is.
func (p *StandInProvider) Ask(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	if p.primary == nil {
		return p.synthetic(ctx, req)
	}
	res, err := p.primary.Ask(ctx, req)
	if err == nil || provider.KindOf(err) != provider.KindMiss || ctx.Err() != nil {
		return res, err
	}
	ids := req.Questions.IDs()
	got := map[string]provider.Answer{}
	out := &provider.Result{}
	var missing []string
	var models []string
	addModel := func(m string) {
		for _, x := range models {
			if x == m {
				return
			}
		}
		if m != "" {
			models = append(models, m)
		}
	}
	merge := func(r *provider.Result) {
		for _, a := range r.Answers {
			got[a.ID] = a
		}
		addModel(r.Model)
		out.Usage.InputTokens += r.Usage.InputTokens
		out.Usage.OutputTokens += r.Usage.OutputTokens
		out.CostUSD += r.CostUSD
		out.Latency += r.Latency
		out.Exchanges = append(out.Exchanges, r.Exchanges...)
		if r.RequestID != "" {
			out.RequestID = r.RequestID
		}
	}
	if len(ids) == 1 {
		missing = ids
	} else {
		for _, id := range ids {
			r, qerr := p.primary.Ask(ctx, req.Subset([]string{id}))
			switch {
			case qerr == nil:
				merge(r)
			case provider.KindOf(qerr) == provider.KindMiss && ctx.Err() == nil:
				missing = append(missing, id)
			default:
				return nil, qerr
			}
		}
	}
	if len(missing) > 0 {
		r, serr := p.synthetic(ctx, req.Subset(missing))
		if serr != nil {
			return nil, serr
		}
		merge(r)
	}
	for _, id := range ids {
		if a, ok := got[id]; ok {
			out.Answers = append(out.Answers, a)
		}
	}
	out.Model = strings.Join(models, "+")
	return out, nil
}

// synthetic asks the stand-in and marks its answers as the stand-in's.
func (p *StandInProvider) synthetic(ctx context.Context, req *provider.Request) (*provider.Result, error) {
	r, err := p.client.Ask(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("stand-in: %w", err)
	}
	for i := range r.Answers {
		r.Answers[i].Provenance.Source = provider.SourceStandIn
		r.Answers[i].Provenance.Origin = ""
	}
	// Not Jev's exchanges: nothing may record them as recordings.
	r.Exchanges = nil
	r.CostUSD = 0
	return r, nil
}

// handlerTransport serves each request with the stand-in's handler in
// memory.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	res := rec.Result()
	res.Request = r
	return res, nil
}
