package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/jevlab/jevlab/provider"
)

// A box question's label (Jev 1.14) is the box the target occupies: a JSON
// object {"top", "bottom", "left", "right"}, each edge a fraction of the
// image in [0, 1] measured from its top-left corner, with top ≤ bottom and
// left ≤ right. In CSV (or a mapped field holding text) the cell is that
// object as text. The resolved Label has Index 0 (a box has no outcome
// index), Box set, and Text the canonical compact JSON BoxLabelText writes:
// what the store keeps as label_text, so a run's box labels are read back
// from the store without the dataset.

// BoxLabelText is the canonical text of a box label:
// {"top":t,"bottom":b,"left":l,"right":r}, each number in its shortest
// round-tripping form.
func BoxLabelText(e provider.Edges) string {
	b := make([]byte, 0, 64)
	for i, f := range []struct {
		k string
		v float64
	}{{"top", e.Top}, {"bottom", e.Bottom}, {"left", e.Left}, {"right", e.Right}} {
		if i == 0 {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, f.k...)
		b = append(b, `":`...)
		b = strconv.AppendFloat(b, f.v, 'g', -1, 64)
	}
	return string(append(b, '}'))
}

// ParseBoxLabel reads a box label: the object (or its text, as a CSV cell
// or the store's label_text holds it). The message says what is wrong and
// how to write it; it is "" when the label is valid.
func ParseBoxLabel(raw json.RawMessage) (provider.Edges, string) {
	raw = bytes.TrimSpace(raw)
	orig := raw
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			raw = bytes.TrimSpace([]byte(s))
		}
	}
	const shape = `write it as {"top": 0.1, "bottom": 0.6, "left": 0.2, "right": 0.7} (fractions of the image from its top-left corner)`
	if len(raw) == 0 || raw[0] != '{' {
		return provider.Edges{}, fmt.Sprintf("a box label is an object, not %s; %s", kindOf(orig), shape)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return provider.Edges{}, fmt.Sprintf("a box label is an object of four numbers (%s); %s", jsonMessage(err), shape)
	}
	var e provider.Edges
	var missing []string
	for _, f := range []struct {
		k string
		d *float64
	}{{"top", &e.Top}, {"bottom", &e.Bottom}, {"left", &e.Left}, {"right", &e.Right}} {
		v, ok := m[f.k]
		if !ok {
			missing = append(missing, f.k)
			continue
		}
		delete(m, f.k)
		v = bytes.TrimSpace(v)
		x, err := strconv.ParseFloat(string(v), 64)
		if err != nil || len(v) == 0 || v[0] == '"' {
			return provider.Edges{}, fmt.Sprintf("box %s is %s, not a number; %s", f.k, kindOf(v), shape)
		}
		if math.IsNaN(x) || x < 0 || x > 1 {
			return provider.Edges{}, fmt.Sprintf("box %s %s is outside [0, 1]; edges are fractions of the image (divide pixels by its width or height)", f.k, v)
		}
		*f.d = x
	}
	if len(missing) > 0 {
		return provider.Edges{}, fmt.Sprintf("box label is missing %v; %s", missing, shape)
	}
	for k := range m {
		return provider.Edges{}, fmt.Sprintf("box label has an unknown field %q; a box has only top, bottom, left and right", k)
	}
	if e.Top > e.Bottom {
		return provider.Edges{}, fmt.Sprintf("box top %g is below its bottom %g (top ≤ bottom, measured down from the image's top); swap them", e.Top, e.Bottom)
	}
	if e.Left > e.Right {
		return provider.Edges{}, fmt.Sprintf("box left %g is right of its right %g (left ≤ right); swap them", e.Left, e.Right)
	}
	return e, ""
}

// resolveBox resolves a box question's label.
func resolveBox(raw json.RawMessage) (Label, bool, string) {
	e, msg := ParseBoxLabel(raw)
	if msg != "" {
		return Label{}, false, msg
	}
	return Label{Index: 0, Text: BoxLabelText(e), Box: &e}, true, ""
}

// StoredBoxLabel reads a box label back from its stored text (label_text,
// as BoxLabelText wrote it): nil when text is not a valid box label.
func StoredBoxLabel(text string) *provider.Edges {
	if len(text) == 0 || text[0] != '{' {
		return nil
	}
	e, msg := ParseBoxLabel(json.RawMessage(text))
	if msg != "" {
		return nil
	}
	return &e
}
