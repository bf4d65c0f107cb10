package runner

import "github.com/jevlab/jevlab/evals/dataset"

// DatasetHasher computes a dataset snapshot's content hash exactly as a run
// does when it stores the snapshot, so a snapshot brought from elsewhere (a
// run bundle) can be checked against the hash it claims.
type DatasetHasher struct{ d *datasetHasher }

// NewDatasetHasher returns an empty hasher.
func NewDatasetHasher() *DatasetHasher { return &DatasetHasher{d: newDatasetHasher()} }

// Add adds the next item, in dataset order.
func (h *DatasetHasher) Add(it *dataset.Item) { h.d.add(it) }

// Sum returns the hex hash of the items added so far.
func (h *DatasetHasher) Sum() string { return h.d.sum() }
