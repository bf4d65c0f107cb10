// Package provider is the System One contract: the request, question and
// answer types exactly as they travel on the wire, their validation, answer
// checking, typed errors, and the Provider interface every source of answers
// (live client, fixture replay, cache, stand-in) implements.
//
// Order is meaning: choice options, noul criteria and score levels keep the
// order they were written in, and text slots (state, instructions, criteria
// entries) are kept as compact raw JSON so structure, key order and number
// spelling survive untouched. The package imports nothing of the project.
package provider
