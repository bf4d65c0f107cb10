package tui

import (
	"strconv"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jevlab/jevlab/evals/workbench"
	"github.com/jevlab/jevlab/internal/termsafe"
)

// hasVariants: the selected question has at least one variant.
func (d *designModel) hasVariants() bool {
	sel := d.selected()
	return sel != nil && len(d.e.set.Variants[sel.ID]) > 0
}

// promote makes a variant of the selected question the question
// (Session.PromoteVariant): with one variant at once, with several after
// a prompt choosing it by number. The old wording becomes a variant
// ("prev"), so nothing is lost; u undoes.
func (d *designModel) promote() tea.Cmd {
	sel := d.selected()
	if sel == nil {
		return nil
	}
	id := sel.ID
	vs := d.e.set.Variants[id]
	switch {
	case len(vs) == 0:
		d.e.say("%s has no variants to promote", termsafe.String(id))
		return nil
	case len(vs) == 1:
		d.promoteVariant(id, vs[0].Name)
		return nil
	}
	p := &prompt{
		title: "Promote which variant of " + termsafe.String(id) + "?",
		body:  "The chosen variant's wording becomes the question; the question's wording as it is now becomes a variant (prev), so nothing is lost. u undoes.",
	}
	for i, v := range vs {
		if i >= 9 {
			break // nine keys; the rest stay promotable with `jevlab` edits
		}
		name := v.Name
		p.choices = append(p.choices, promptChoice{key: strconv.Itoa(i + 1), desc: termsafe.String(name), do: func() tea.Cmd {
			d.promoteVariant(id, name)
			return nil
		}})
	}
	d.prompt = p
	d.prompt.build(d)
	return nil
}

// promoteVariant promotes question id's variant name as one undo step,
// and moves the answers with the wordings: the variant's answer becomes
// the question's, the question's the kept variant's, so nothing shown is
// marked stale that was asked as it now reads.
func (d *designModel) promoteVariant(id, name string) {
	var kept string
	err := d.apply(id, func() error {
		var err error
		kept, err = d.e.sess.PromoteVariant(id, name, "")
		return err
	})
	if err != nil {
		d.e.fail("%v", err)
		return
	}
	a := d.ans
	from, to := workbench.VariantRef{Question: id, Name: name}.ID(), workbench.VariantRef{Question: id, Name: kept}.ID()
	base, promoted := a.answers[id], a.answers[from]
	delete(a.answers, from)
	if promoted != nil {
		a.answers[id] = promoted
	} else {
		delete(a.answers, id)
	}
	if base != nil {
		a.answers[to] = base
	}
	d.changed(id)
	d.e.say("promoted %s; the old wording is %s (u undoes)", termsafe.String(from), termsafe.String(to))
}
