package dialects

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/jevlab/jevlab/provider"
)

// StandardAgentsResult writes res, the checked answers to req, as a Standard
// Agents DecisionResult: {"model", "answers": {id: answer}, "usage"}, each
// answer in that spec's shape — a noul as {"type": "boolean",
// "probability": P(true)}, a choice as {"type": "choice", "choice",
// "probabilities", "confidence"?}, a score as {"type": "score", "score",
// "probabilities", "legend", "confidence"?} with the legend mapping each
// level index to the level as it was asked. Distributions are complete and
// in question order, values exactly as received (never renormalised,
// rounded or thresholded), and a confidence appears only when the provider
// sent one. Questions req asked that res does not answer are left out.
func StandardAgentsResult(req *provider.Request, res *provider.Result) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"model":`)
	b.Write(provider.String(res.Model))
	b.WriteString(`,"answers":{`)
	first := true
	for i := range req.Questions {
		e := &req.Questions[i]
		a, ok := res.Answer(e.ID)
		if !ok {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.Write(provider.String(e.ID))
		b.WriteByte(':')
		if err := standardAnswer(&b, &e.Question, a); err != nil {
			return nil, fmt.Errorf("question %s: %w", e.ID, err)
		}
	}
	fmt.Fprintf(&b, `},"usage":{"input_tokens":%d,"output_tokens":%d}}`, res.Usage.InputTokens, res.Usage.OutputTokens)
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func standardAnswer(b *bytes.Buffer, q *provider.Question, a *provider.Answer) error {
	num := func(v float64) { b.WriteString(strconv.FormatFloat(v, 'g', -1, 64)) }
	conf := func() {
		if a.HasConfidence {
			b.WriteString(`,"confidence":`)
			num(a.Confidence)
		}
	}
	switch q.Type {
	case provider.Noul:
		b.WriteString(`{"type":"boolean","probability":`)
		num(a.P)
		b.WriteByte('}')
	case provider.Choice:
		if len(a.Probs) != len(q.Options) {
			return fmt.Errorf("%d probabilities for %d options", len(a.Probs), len(q.Options))
		}
		b.WriteString(`{"type":"choice","choice":`)
		b.Write(provider.String(a.Choice))
		b.WriteString(`,"probabilities":{`)
		for i, o := range q.Options {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(provider.String(o.Label))
			b.WriteByte(':')
			num(a.Probs[i])
		}
		b.WriteByte('}')
		conf()
		b.WriteByte('}')
	case provider.Score:
		if len(a.Probs) != len(q.Levels) {
			return fmt.Errorf("%d probabilities for %d levels", len(a.Probs), len(q.Levels))
		}
		b.WriteString(`{"type":"score","score":`)
		num(a.Score)
		b.WriteString(`,"probabilities":{`)
		for i, p := range a.Probs {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, `"%d":`, i)
			num(p)
		}
		b.WriteString(`},"legend":{`)
		for i, l := range q.Levels {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, `"%d":`, i)
			if len(l) == 0 {
				b.WriteString("null")
			} else {
				b.Write(provider.Compact(l))
			}
		}
		b.WriteByte('}')
		conf()
		b.WriteByte('}')
	default:
		// A type the Standard Agents spec has no shape for (a box) is
		// written as the provider sent it.
		if len(a.Raw) > 0 && json.Valid(a.Raw) {
			b.Write(provider.Compact(a.Raw))
			break
		}
		raw, err := json.Marshal(a)
		if err != nil {
			return err
		}
		b.Write(raw)
	}
	return nil
}
