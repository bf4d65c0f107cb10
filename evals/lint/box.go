package lint

import (
	"fmt"
	"strings"

	"github.com/jevlab/jevlab/provider"
)

// IDBoxModel is a box question (Jev 1.14) asked of a model that refuses
// it: jev-latest still answers with Jev 1.13, which answers a box request
// with 400 "Invalid request.", as jev-1.13.0 does.
const IDBoxModel = "box-model"

// boxModel reports a box question the set's model cannot answer. Host
// names (typesafe/jev-1.13, ~typesafe/jev-latest) are read by their last
// part; a model jevlab does not know is left alone.
func (c *checker) boxModel(id string) {
	model := c.set.ModelName()
	base := model[strings.LastIndex(model, "/")+1:]
	base = strings.TrimPrefix(base, "~")
	switch base {
	case "jev-latest", "jev-1.13", "jev-1.13.0":
	default:
		return
	}
	line, col := c.loc.at(id, "type")
	why := "Jev 1.13"
	if base == "jev-latest" {
		why = "jev-latest, which still answers with Jev 1.13"
	}
	c.findings = append(c.findings, Finding{ID: IDBoxModel, Severity: SeverityError, File: c.file, Line: line, Col: col, Question: id,
		Message: fmt.Sprintf("a box question needs Jev 1.14, but the set asks %q (%s): the API answers 400 \"Invalid request.\"", model, why),
		Fix:     fmt.Sprintf("set model: %s (or --model %s), and opt in with --images or danger_zone: {images: true}", provider.BoxModels[0], provider.BoxModels[1])})
}
