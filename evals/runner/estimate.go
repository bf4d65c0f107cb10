package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/jevlab/jevlab/evals/dataset"
	"github.com/jevlab/jevlab/provider"
	"github.com/jevlab/jevlab/store"
)

// BytesPerToken is the rough size of an input token in a request body, used
// where no measured usage is known.
const BytesPerToken = 4

// estimateCost is a request's approximate cost: body bytes / BytesPerToken
// input tokens at perMillion USD per million.
func estimateCost(req *provider.Request, perMillion float64) float64 {
	var b bytes.Buffer
	req.AppendJSON(&b)
	return float64(b.Len()/BytesPerToken) * perMillion / 1e6
}

// Estimate is a dry run's approximate spend.
type Estimate struct {
	Items        int     `json:"items"`
	Repeat       int     `json:"repeat"`
	Requests     int     `json:"requests"`
	RequestBytes int64   `json:"request_bytes"`
	InputTokens  int64   `json:"input_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	// Basis says how tokens were estimated: from request size, or from the
	// usage measured in an earlier run of the same question set.
	Basis string `json:"basis"`
	// Stored counts item × repeats already stored when resuming.
	Stored int `json:"stored,omitempty"`
	// Variants counts the variants asked beside their questions; the
	// Variant* fields are what they add (included in the totals above),
	// estimated from request size.
	Variants            int     `json:"variants,omitempty"`
	VariantRequestBytes int64   `json:"variant_request_bytes,omitempty"`
	VariantInputTokens  int64   `json:"variant_input_tokens,omitempty"`
	VariantCostUSD      float64 `json:"variant_cost_usd,omitempty"`
}

// DryRun estimates the tokens and cost of cfg without calling out: request
// bytes / BytesPerToken per item × repeat, or, when an earlier run of the
// same question set measured usage, that run's mean input tokens per answered
// item. Cached answers cost nothing, so this is an upper bound for cached
// and offline runs; either way it is approximate.
func DryRun(ctx context.Context, cfg Config) (*Estimate, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	est := &Estimate{Repeat: cfg.Repeat, Basis: fmt.Sprintf("request size (~%d bytes per token)", BytesPerToken)}
	var buf bytes.Buffer
	var variantBytes int64
	est.Variants = len(cfg.Variants)
	err := cfg.source()(func(it dataset.Item) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf.Reset()
		req := cfg.Set.Request(it.State)
		if cfg.Transform != nil {
			if r, _, err := cfg.Transform(it, 0, req); err == nil {
				req = r
			}
		}
		req.AppendJSON(&buf)
		base := buf.Len()
		est.Items++
		est.RequestBytes += int64(base)
		if len(cfg.Variants) > 0 {
			// What the variants add to the request as the set builds it.
			buf.Reset()
			cfg.Set.Request(it.State).AppendJSON(&buf)
			plain := buf.Len()
			buf.Reset()
			cfg.Set.RequestWith(it.State, cfg.Variants).AppendJSON(&buf)
			variantBytes += int64(buf.Len() - plain)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read dataset %s: %w", cfg.DatasetPath, err)
	}
	est.Requests = est.Items * cfg.Repeat
	est.InputTokens = est.RequestBytes / BytesPerToken * int64(cfg.Repeat)
	if cfg.DB != nil {
		runs, err := cfg.DB.Runs(ctx, store.RunFilter{SetHash: store.HashBytes(SnapshotJSON(cfg.Set))})
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			if len(recordedVariants(r.Settings)) > 0 {
				continue // its usage includes variants
			}
			if ok := r.Done - r.Errors; ok > 0 && r.InputTokens > 0 {
				per := float64(r.InputTokens) / float64(ok)
				est.InputTokens = int64(per * float64(est.Requests))
				est.Basis = fmt.Sprintf("measured usage of run %s (%.0f input tokens per item)", r.ID, per)
				break
			}
		}
		if cfg.Resume != "" {
			if r, err := cfg.DB.ResolveRun(ctx, cfg.Resume); err == nil {
				est.Stored = r.Done
				if est.Requests > 0 {
					left := est.Requests - r.Done
					if left < 0 {
						left = 0
					}
					est.InputTokens = est.InputTokens * int64(left) / int64(est.Requests)
				}
			}
		}
	}
	if variantBytes > 0 {
		// The measured basis is of runs without variants; what the
		// variants add is their share of the request bytes.
		est.VariantRequestBytes = variantBytes
		est.VariantInputTokens = variantBytes / BytesPerToken * int64(cfg.Repeat)
		if est.Stored > 0 && est.Requests > 0 {
			left := max(est.Requests-est.Stored, 0)
			est.VariantInputTokens = est.VariantInputTokens * int64(left) / int64(est.Requests)
		}
		est.RequestBytes += variantBytes
		est.InputTokens += est.VariantInputTokens
		est.VariantCostUSD = float64(est.VariantInputTokens) * cfg.PricePerMillion / 1e6
	}
	est.CostUSD = float64(est.InputTokens) * cfg.PricePerMillion / 1e6
	return est, nil
}

func jsonMarshal(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	return json.RawMessage(b), err
}
