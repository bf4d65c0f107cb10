// Package archtest holds the test that keeps jevlab's import arrows as
// design.md draws them; it has no code of its own.
package archtest
