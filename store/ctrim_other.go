//go:build !(cgo && linux)

package store

// trimCHeap does nothing where the C library keeps no free pages to hand
// back (see ctrim_cgo.go).
func trimCHeap() {}
