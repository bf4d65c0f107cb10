package formats

import "errors"

// JevEvalFiles names a jev-eval run's files.
type JevEvalFiles struct{ Config, Data, Cache string }

// ImportJevEval is not written yet.
func ImportJevEval(f JevEvalFiles, runs bool) (*Folder, error) {
	return nil, errors.New("--from jev-eval: not supported yet")
}
