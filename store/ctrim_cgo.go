//go:build cgo && linux

package store

/*
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
static void jevlab_trim(void) {
#if defined(__GLIBC__)
	malloc_trim(0);
#endif
}
*/
import "C"

// trimCHeap hands the C heap's free pages back to the operating system.
// SQLite's page caches live there; glibc keeps what a closed connection
// freed, so without it a process's resident memory stays at its largest
// page caches after the connections are gone.
func trimCHeap() { C.jevlab_trim() }
