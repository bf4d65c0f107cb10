// Package workbench is jevlab's use-case layer: the one place that opens a
// question set with its dataset, fixtures and provider, asks a state or an
// item, starts and resumes runs from one configuration template, loads a
// stored run into one view (metrics with the canonical seed, per-item
// results, labels), compares two runs, resolves labels against the set as it
// is now, and lays out the rows that draw an answer.
//
// Both front ends call it: the commands in cmd/jevlab print what it
// computed, and the workbench screens in tui present it. Neither measures,
// decides or loads anything itself, so a screen and the matching command can
// never disagree about the same run. The tui package imports this layer and
// provider types only (never metrics, compare, runner or store); the type
// aliases in types.go give it the layer's vocabulary.
package workbench
