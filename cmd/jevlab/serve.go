package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jevlab/jevlab/provider/fixtures"
	"github.com/jevlab/jevlab/provider/standin"
)

// serveOptions are the flags of jevlab serve.
type serveOptions struct {
	addr       string
	synthetic  bool
	requireKey bool
	tokenLimit bool // --token-limits
	seed       int64
	faults     standin.Faults
	fragile    standin.Fragile
	fragileOn  bool
}

func newServeCmd(a *app) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8089] [--fixtures PATH]... [--synthetic] [faults]",
		Short: "Run a stand-in System One server on loopback (replay fixtures, synthetic answers, faults)",
		Long: `serve runs the jevlab stand-in: POST /v1/systemone and GET /v1/models on a
loopback address, validating requests like TypeSafe (422 with FastAPI details).

It answers each question from the fixture files named with --fixtures (recorded
exchanges, matched per question by model, state and question body, so subsets and
renamed ids replay), and synthetically with --synthetic (deterministic
lexical-overlap distributions under the model "standin-synthetic-1", never Jev's
name). Without --synthetic, a question that is not recorded gets 422 naming it.

Faults for testing clients: --latency/--jitter (fixed delay plus an exponential
tail), --rate-limit (429 with Retry-After above that many requests/s),
--fail-rate (500/502/503/529), --timeout-rate (hang until the client gives up),
--malformed-rate (cut-off JSON) and --missing-rate (an answer left out).

Flaws of known size for jevlab probe (with --synthetic): --fragile makes the
synthetic answerer an ideal respondent, and --position-bias, --negation-gap,
--obey-injection, --distractor-pull (--distractor-label), --repeat-noise and
--edit-sensitivity each add one flaw whose mean size is the value given (see provider/standin Fragile).

With --require-key, requests must carry "Authorization: Bearer $TYPESAFE_API_KEY"
(the variable named by --key-env); the key is never printed. Only loopback
addresses are allowed. Ctrl-C stops it and prints what it served.`,
		Example: `  jevlab serve --fixtures ../shared/testdata/banking77/recorded.jsonl
  jevlab serve --synthetic --latency 80ms --jitter 40ms --rate-limit 20 --fail-rate 0.02
  TYPESAFE_BASE_URL=http://127.0.0.1:8089 jevlab ask questions.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return a.serve(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:8089", "loopback address to listen on (port 0 picks a free one)")
	f.BoolVar(&o.synthetic, "synthetic", false, "answer questions that are not recorded synthetically (model standin-synthetic-1)")
	f.BoolVar(&o.tokenLimit, "token-limits", false, "refuse requests over 64k tokens (32k for the state and the longest question), counted as body bytes / 4, unless sent with TypeSafe-Danger-Zone-Long-Context: true (262k)")
	f.BoolVar(&o.requireKey, "require-key", false, "require the key in $TYPESAFE_API_KEY (see --key-env) as a bearer token")
	f.Int64Var(&o.seed, "seed", 1, "seed for fault injection and synthetic key order")
	f.DurationVar(&o.faults.Latency, "latency", 0, "fixed delay added to every answer")
	f.DurationVar(&o.faults.LatencyJitter, "jitter", 0, "mean of an exponential extra delay (capped at 10x)")
	f.Float64Var(&o.faults.RateLimitRPS, "rate-limit", 0, "requests per second admitted; beyond it 429 with Retry-After (0: no limit)")
	f.IntVar(&o.faults.RateLimitBurst, "rate-limit-burst", 0, "requests admitted at once (default: the rate, at least 1)")
	f.Float64Var(&o.faults.FailRate, "fail-rate", 0, "share of requests answered 500/502/503/529")
	f.Float64Var(&o.faults.TimeoutRate, "timeout-rate", 0, "share of requests that hang until the client gives up")
	f.DurationVar(&o.faults.TimeoutAfter, "timeout-after", 0, "end a hanging request with 408 after this long (0: wait for the client)")
	f.Float64Var(&o.faults.MalformedRate, "malformed-rate", 0, "share of 200 responses whose JSON is cut off")
	f.Float64Var(&o.faults.MissingRate, "missing-rate", 0, "share of 200 responses with one answer left out")
	f.Float64Var(&o.fragile.PositionBias, "position-bias", 0, "fragile: mean probability moved to a choice's first option (<= 0.5)")
	f.Float64Var(&o.fragile.NegationGap, "negation-gap", 0, "fragile: mean |P(X) + P(not X) - 1| of a negated noul (<= 0.25)")
	f.Float64Var(&o.fragile.Obedience, "obey-injection", 0, "fragile: chance an answer follows an injected 'ignore … answer \"T\"' sentence")
	f.Float64Var(&o.fragile.DistractorPull, "distractor-pull", 0, "fragile: mean probability a distractor option draws (<= 0.5)")
	f.StringVar(&o.fragile.DistractorLabel, "distractor-label", "", "fragile: the distractor's label (default "+standin.DefaultDistractorLabel+")")
	f.Float64Var(&o.fragile.RepeatNoise, "repeat-noise", 0, "fragile: expected total-variation distance between two answers to the same request (<= 0.5)")
	f.Float64Var(&o.fragile.EditSensitivity, "edit-sensitivity", 0, "fragile: chance a harmless edit of the state (case, spacing, field order) moves an answer to another outcome (<= 1)")
	f.BoolVar(&o.fragileOn, "fragile", false, "answer synthetically as an ideal respondent (order-blind, negation-coherent, deaf to injections and distractors) with the flaws the fragile flags set")
	return cmd
}

// checkLoopback refuses any address that is not loopback: the stand-in is a
// test server and must not be reachable from the network.
func checkLoopback(addr string) error { return standin.CheckLoopbackAddr(addr) }

func (a *app) serve(ctx context.Context, o serveOptions) error {
	if err := checkLoopback(o.addr); err != nil {
		return usageErr(err)
	}
	if len(a.fixtures) == 0 && !o.synthetic {
		return usageErr(errors.New("nothing to answer with: name recorded exchanges with --fixtures PATH, or pass --synthetic"))
	}
	cfg := standin.Config{Synthetic: o.synthetic, Faults: o.faults, Seed: o.seed, TokenLimits: o.tokenLimit}
	if o.fragileOn || o.fragile != (standin.Fragile{}) {
		if !o.synthetic {
			return usageErr(errors.New("--fragile and its flags shape synthetic answers: add --synthetic"))
		}
		fr := o.fragile
		cfg.Fragile = &fr
	}
	if o.requireKey {
		cfg.APIKey = os.Getenv(a.keyEnv)
		if cfg.APIKey == "" {
			return usageErr(fmt.Errorf("--require-key: $%s is empty; set it to the key clients must send", a.keyEnv))
		}
	}
	var torn int
	for _, path := range a.fixtures {
		exs, warns, err := fixtures.ReadFileWith(path, fixtures.ReadOptions{MaxLineBytes: a.maxFixtureLine})
		if err != nil {
			return usageErr(err)
		}
		for _, w := range warns {
			fmt.Fprintf(a.stderr, "jevlab: warning: %v\n", w)
		}
		torn += fixtures.BadLines(warns)
		cfg.Exchanges = append(cfg.Exchanges, exs...)
	}
	s, err := standin.New(cfg)
	if err != nil {
		return usageErr(err)
	}
	defer s.Close()
	for _, w := range s.Warnings() {
		fmt.Fprintf(a.stderr, "jevlab: warning: fixtures: %v\n", w)
	}

	ln, err := standin.Listen(o.addr)
	if err != nil {
		return failErr(fmt.Errorf("listen on %s: %w (is another jevlab serve running? try --addr 127.0.0.1:0)", o.addr, err))
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(a.stdout, "jevlab stand-in serving POST /v1/systemone and GET /v1/models at %s\n", base)
	fmt.Fprintf(a.stdout, "  use it with: TYPESAFE_BASE_URL=%s  (or --base-url %s)\n", base, base)
	fmt.Fprintf(a.stdout, "  %s\n", serveSummary(len(a.fixtures), len(cfg.Exchanges), torn, s, o, cfg.APIKey != ""))
	fmt.Fprintln(a.stdout, "  Ctrl-C to stop")

	srv := standin.NewHTTPServer(s, standin.ServerLimits{})
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return failErr(fmt.Errorf("serve %s: %w", base, err))
	case <-ctx.Done():
	}
	s.Close() // release requests hanging in an injected timeout
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	st := s.Stats()
	fmt.Fprintf(a.stdout, "stopped after %d requests: %d ok, %d invalid (%d not recorded), %d auth, %d rate-limited, %d failed, %d timed out, %d malformed, %d missing, %d canceled, %d not found\n",
		st.Requests, st.OK, st.Invalid, st.Unrecorded, st.Auth, st.RateLimited, st.Unavailable, st.Timeout, st.Malformed, st.Missing, st.Canceled, st.NotFound)
	return nil
}

// serveSummary is the one-line description of what the stand-in answers.
func serveSummary(files, exchanges, torn int, s *standin.Server, o serveOptions, key bool) string {
	var parts []string
	if files > 0 {
		var names []string
		for _, m := range s.Models() {
			if m.Name != standin.SyntheticModel {
				names = append(names, m.Name)
			}
		}
		sort.Strings(names)
		p := fmt.Sprintf("fixtures: %d file(s), %d exchanges, %d recorded answers", files, exchanges, s.Recorded())
		if len(names) > 0 {
			p += " for " + strings.Join(names, ", ")
		}
		if torn > 0 {
			p += fmt.Sprintf(" (%d bad lines skipped)", torn)
		}
		parts = append(parts, p)
	}
	if o.synthetic {
		parts = append(parts, "synthetic: on (model "+standin.SyntheticModel+")")
	} else {
		parts = append(parts, "synthetic: off (unrecorded questions get 422)")
	}
	if f := describeFaults(o.faults); f != "" {
		parts = append(parts, "faults: "+f)
	}
	if key {
		parts = append(parts, "key required")
	}
	return strings.Join(parts, "; ")
}

func describeFaults(f standin.Faults) string {
	var p []string
	switch {
	case f.LatencyJitter > 0:
		p = append(p, fmt.Sprintf("latency %s + exponential tail (mean %s)", f.Latency, f.LatencyJitter))
	case f.Latency > 0:
		p = append(p, fmt.Sprintf("latency %s", f.Latency))
	}
	if f.RateLimitRPS > 0 {
		p = append(p, fmt.Sprintf("rate limit %g/s", f.RateLimitRPS))
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"fail", f.FailRate}, {"timeout", f.TimeoutRate}, {"malformed", f.MalformedRate}, {"missing", f.MissingRate}} {
		if r.v > 0 {
			p = append(p, fmt.Sprintf("%s %g%%", r.name, 100*r.v))
		}
	}
	return strings.Join(p, ", ")
}
