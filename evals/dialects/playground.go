package dialects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/lzstring"
	"github.com/jevlab/jevlab/provider"
)

// PlaygroundURL is the prefix of a TypeSafe Playground share link; the
// payload follows it. Older links use /decode#share/ instead.
const PlaygroundURL = "https://console.typesafe.ai/playground#share/"

// Share is the decoded content of a Playground share link.
type Share struct {
	// APIVersion is "v1".
	APIVersion string
	// DocumentText is the state as text, or JSON text for a structured state.
	DocumentText string
	// PromptsText is the questions map as JSON text.
	PromptsText string
	// SelectedModels lists the models the Playground asks.
	SelectedModels []string
}

// MarshalJSON writes the payload with the Playground's field order and
// without HTML escaping (as JavaScript's JSON.stringify; provider.String
// spells strings that way).
func (s Share) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion":`)
	b.Write(provider.String(s.APIVersion))
	b.WriteString(`,"documentText":`)
	b.Write(provider.String(s.DocumentText))
	b.WriteString(`,"promptsText":`)
	b.Write(provider.String(s.PromptsText))
	b.WriteString(`,"selectedModels":[`)
	for i, m := range s.SelectedModels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(provider.String(m))
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}

// Payload returns the lz-string compressToEncodedURIComponent form of s.
func (s Share) Payload() string {
	data, _ := s.MarshalJSON()
	return lzstring.CompressToEncodedURIComponent(string(data))
}

// Link returns the share link for s.
func (s Share) Link() string { return PlaygroundURL + s.Payload() }

// SharePayload extracts the payload from a share link
// (…/playground#share/<payload> or …/decode#share/<payload>) or returns a
// bare payload as it is.
func SharePayload(link string) (string, error) {
	s := strings.TrimSpace(link)
	if i := strings.Index(s, "#share/"); i >= 0 {
		s = s[i+len("#share/"):]
	} else if strings.Contains(s, "://") || strings.HasPrefix(s, "console.") {
		return "", fmt.Errorf("%.60q is a link without a #share/ fragment; copy the Playground's share link", s)
	}
	if strings.Contains(s, "%") {
		u, err := url.PathUnescape(s)
		if err != nil {
			return "", fmt.Errorf("payload is not valid percent-encoding: %w", err)
		}
		s = u
	}
	if s == "" {
		return "", errors.New("the link has an empty payload")
	}
	return s, nil
}

// DecodeShare decodes a share link or bare payload into its JSON text.
func DecodeShare(link string) ([]byte, error) {
	p, err := SharePayload(link)
	if err != nil {
		return nil, err
	}
	text, err := lzstring.DecompressFromEncodedURIComponent(p)
	if err != nil {
		return nil, fmt.Errorf("decode share payload (is the link complete?): %w", err)
	}
	if text == "" {
		return nil, errors.New("the share payload decodes to nothing (is the link complete?)")
	}
	return []byte(text), nil
}

// playground reads a share link or payload.
func (im *importer) playground(data []byte) error {
	text, err := DecodeShare(string(data))
	if err != nil {
		return im.wrap("", err)
	}
	top, err := im.parseObject("payload", text)
	if err != nil {
		return err
	}
	if err := im.only(top, "a Playground share payload", "apiVersion", "documentText", "promptsText", "selectedModels"); err != nil {
		return err
	}
	if v := top.get("apiVersion"); v != nil {
		s, err := im.str("payload.apiVersion", v)
		if err != nil {
			return err
		}
		if s != "v1" {
			return im.fail("payload.apiVersion", "%q: jevlab reads apiVersion v1 share links only", s)
		}
	}
	if v := top.get("documentText"); v != nil && provider.KindOfJSON(v) != 'n' {
		doc, err := im.str("payload.documentText", v)
		if err != nil {
			return err
		}
		im.state = documentState(doc)
	}
	pv := top.get("promptsText")
	if pv == nil {
		return im.fail("payload.promptsText", "missing; the share holds no questions")
	}
	prompts, err := im.str("payload.promptsText", pv)
	if err != nil {
		return err
	}
	qo, err := im.parseObject("payload.promptsText", []byte(prompts))
	if err != nil {
		return err
	}
	if len(qo.fields) == 0 {
		return im.fail("payload.promptsText", "holds no questions; a System One request needs at least one")
	}
	for _, f := range qo.fields {
		path := join("promptsText", f.Key)
		var q provider.Question
		if err := q.UnmarshalJSON(f.Value); err != nil {
			return im.wrap(path, err)
		}
		if err := im.addQuestion(path, f.Key, q); err != nil {
			return err
		}
	}
	if v := top.get("selectedModels"); v != nil && provider.KindOfJSON(v) != 'n' {
		var models []string
		if err := json.Unmarshal(v, &models); err != nil {
			return im.fail("payload.selectedModels", "must be an array of model names")
		}
		if len(models) > 0 {
			im.model = models[0]
		}
		if len(models) > 1 {
			im.note("the share selects %d models (%s); a question set names one model, so this set uses %s: evaluate the others with --model.",
				len(models), strings.Join(models, ", "), models[0])
		}
	}
	return nil
}

// documentState turns the Playground's documentText into a state: JSON text
// of an object or array is the structured state it spells (the Playground
// enters structured state as JSON text); anything else is the text itself.
// Empty text means no working state.
func documentState(doc string) json.RawMessage {
	if strings.TrimSpace(doc) == "" {
		return nil
	}
	t := strings.TrimSpace(doc)
	if (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
		return provider.Compact(json.RawMessage(t))
	}
	return provider.String(doc)
}

// ShareFor builds the Playground share for set: the working state as text
// (JSON text, indented as the Playground writes it, for a structured state),
// the questions map as indented JSON, and the set's model. Notes name what a
// share cannot carry (caller-side settings, gates, the dataset).
func ShareFor(set *questionset.Set) (Share, []string, error) {
	var notes []string
	for i := range set.Questions {
		if err := set.Questions[i].Question.Validate(); err != nil {
			return Share{}, nil, fmt.Errorf("question %q: %w", set.Questions[i].ID, err)
		}
	}
	if len(set.Questions) == 0 {
		return Share{}, nil, errors.New("the set has no questions to share")
	}
	model := set.Model
	if model == "" {
		model = provider.DefaultModel
	}
	sh := Share{APIVersion: "v1", SelectedModels: []string{model}}
	switch provider.KindOfJSON(set.State) {
	case 0, 'n':
	case 's':
		sh.DocumentText = provider.Text(set.State)
		if provider.KindOfJSON(documentState(sh.DocumentText)) != 's' {
			notes = append(notes, "the state is text that reads as JSON; the share cannot tell text from JSON text, so it opens (and imports back) as a structured state")
		}
	case 'o', 'a':
		sh.DocumentText = indent(set.State)
	default:
		return Share{}, nil, fmt.Errorf("state must be a string, object or array, not a %s", provider.KindOfJSON(set.State))
	}
	qs, err := set.Questions.MarshalJSON()
	if err != nil {
		return Share{}, nil, fmt.Errorf("encode questions: %w", err)
	}
	sh.PromptsText = indent(qs)
	for _, id := range set.Questions.IDs() {
		s, ok := set.Settings[id]
		if !ok {
			continue
		}
		if s.Threshold != nil {
			notes = append(notes, fmt.Sprintf("question %q: threshold %v is caller-side and has no place in a Playground share", id, *s.Threshold))
		}
		if s.MinConfidence != nil {
			notes = append(notes, fmt.Sprintf("question %q: min_confidence %v is caller-side and has no place in a Playground share", id, *s.MinConfidence))
		}
	}
	if len(set.Gates) > 0 {
		notes = append(notes, "gates are jevlab's own and are not in the share")
	}
	if set.Dataset != "" {
		notes = append(notes, fmt.Sprintf("dataset %s is not in the share; the share holds only the working state", set.Dataset))
	}
	return sh, notes, nil
}

// indent renders raw JSON as JSON.stringify(v, null, 2) does.
func indent(v json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, v, "", "  "); err != nil {
		return string(v)
	}
	return b.String()
}
