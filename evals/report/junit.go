package report

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/jevlab/jevlab/evals/metrics"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the run's gates as JUnit XML: one test case per
// question × gate (classname jevlab.<question set>.<question>), failed
// gates as failures. A run without gates gets one passing case per
// question carrying its headline numbers, so CI still shows it.
func WriteJUnit(w io.Writer, rep *RunReport) error {
	suiteName := "jevlab"
	class := "jevlab"
	if rep.Run != nil {
		suiteName = "jevlab run " + rep.Run.ID
		class = "jevlab." + rep.Run.SetName
	}
	s := junitSuite{Name: suiteName}
	if rep.Run != nil {
		s.Properties = []junitProperty{{"run", rep.Run.ID}, {"model", rep.Run.Model}, {"question_set", rep.Run.SetName}}
	}
	if len(rep.Questions) > 0 {
		s.Properties = append(s.Properties, junitProperty{"conventions", ConventionsOf(rep.Questions)})
		if u := UsageNote(rep); u != "" {
			s.Properties = append(s.Properties, junitProperty{"usage", u})
		}
	}
	for _, h := range rep.Holdout {
		s.Properties = append(s.Properties, junitProperty{"holdout." + h.Question, h.Message})
	}
	byID := map[string]*metrics.QuestionReport{}
	for _, q := range rep.Questions {
		byID[q.ID] = q
	}
	if len(rep.Gates) == 0 {
		for _, q := range rep.Questions {
			s.Cases = append(s.Cases, junitCase{Name: q.ID + " report", Classname: class + "." + q.ID, SystemOut: Headline(q)})
		}
	}
	for _, g := range rep.Gates {
		c := junitCase{Name: fmt.Sprintf("%s %s %g", g.Question, g.Gate, g.Limit), Classname: class + "." + g.Question, SystemOut: g.Msg}
		if q := byID[g.Question]; q != nil {
			c.SystemOut += "\n" + Headline(q)
		}
		if !g.Passed {
			c.Failure = &junitFailure{Message: g.Msg, Type: g.Gate, Text: fmt.Sprintf("question %s: gate %s (%s): %s", g.Question, g.Gate, g.Source, g.Msg)}
			s.Failures++
		}
		s.Cases = append(s.Cases, c)
	}
	s.Cases = append(s.Cases, variantCases(class, rep.Variants)...)
	s.Tests = len(s.Cases)
	out := junitSuites{Name: suiteName, Tests: s.Tests, Failures: s.Failures, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Headline is one question's figures on one line, as JUnit and other
// one-line outputs carry them: accuracy (with its interval and count),
// top prob and the gap, ECE with its noise floor, Brier.
func Headline(q *metrics.QuestionReport) string {
	acc := est(q.Accuracy)
	if q.Accuracy.Defined() {
		acc += fmt.Sprintf(" (%d/%d)", q.Correct, q.Labelled)
	}
	s := fmt.Sprintf("accuracy %s; %s; ECE %s, %s; Brier %s", acc, MeanConfidenceText(q), est(q.ECE), ECEFloorText(q), est(q.Brier))
	if c := q.Selective.Cutpoint; c != nil {
		s += "; cut-point " + CutpointText(c)
	}
	return s
}
