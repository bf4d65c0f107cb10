package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jevlab/jevlab/provider"
)

// ItemResult is one item × repeat of a run: the call's accounting, its error
// (if the call failed) and one ItemAnswer per question.
type ItemResult struct {
	ItemID    string
	Seq       int // the item's position in the dataset
	Repeat    int // 0 for the first asking
	LatencyMS float64
	Usage     provider.Usage
	CostUSD   float64
	Model     string // resolved model
	RequestID string
	Attempts  int
	// ErrKind and ErrMsg are set when the call failed; the answers then
	// carry the same error and no Answer.
	ErrKind string
	ErrMsg  string
	Answers []ItemAnswer
}

// ItemAnswer is one item × question × repeat of a run.
type ItemAnswer struct {
	ItemID     string           `json:"item_id"`
	QuestionID string           `json:"question_id"`
	Repeat     int              `json:"repeat"`
	Seq        int              `json:"seq"`
	Answer     *provider.Answer `json:"answer,omitempty"` // nil on error
	// Decided is the decided value as text: the chosen label (choice), the
	// most probable level's index (score), or P(true) (noul).
	Decided   string  `json:"decided,omitempty"`
	ErrKind   string  `json:"error_kind,omitempty"`
	ErrMsg    string  `json:"error,omitempty"`
	LatencyMS float64 `json:"latency_ms"`
	Label     *int    `json:"label,omitempty"` // the item's label index for this question, if labelled
	LabelText string  `json:"label_text,omitempty"`
}

// ItemKey names one item × repeat.
type ItemKey struct {
	ItemID string
	Repeat int
}

const (
	insItemSQL = `INSERT OR IGNORE INTO item_results (run_id, item_id, repeat, seq, latency_ms, input_tokens, output_tokens,
		cost_usd, model, request_id, attempts, err_kind, err_msg) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`
	insAnswerSQL = `INSERT OR IGNORE INTO answers (run_id, item_id, question_id, repeat, seq, type, decided, p, score, choice,
		confidence, probs, raw, source, model, recorded_at, origin, latency_ms, label_index, label_text, err_kind, err_msg, raw_dict)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
)

// SaveItems stores a batch of finished items of run in one transaction and
// adds them to the run's totals. It is idempotent: an item × repeat already
// stored with its answers is skipped (and not counted twice), so a resumed
// run never duplicates. An item × repeat stored as failed is replaced by
// the new result (a retry): the run's done count stays, its error count
// follows the new outcome, and the tokens and cost of both attempts are
// kept, on the item and the run, because both were spent. It returns how
// many items were new or replaced.
func (db *DB) SaveItems(ctx context.Context, runID string, items []ItemResult) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	insItem, err := db.stmt(ctx, insItemSQL)
	if err != nil {
		return 0, fmt.Errorf("save items of run %s: %w", runID, err)
	}
	insAns, err := db.stmt(ctx, insAnswerSQL)
	if err != nil {
		return 0, fmt.Errorf("save items of run %s: %w", runID, err)
	}
	var added, replaced, errs int
	var in, out int64
	var cost float64
	models := map[string]bool{}
	var buf []byte
	var newDicts map[string]int64
	err = db.write(ctx, func(tx *sql.Tx) error {
		newDicts = map[string]int64{}
		si, sa := tx.StmtContext(ctx, insItem), tx.StmtContext(ctx, insAns)
		defer si.Close()
		defer sa.Close()
		for i := range items {
			it := &items[i]
			res, err := si.ExecContext(ctx, runID, it.ItemID, it.Repeat, it.Seq, it.LatencyMS, it.Usage.InputTokens, it.Usage.OutputTokens,
				it.CostUSD, it.Model, it.RequestID, it.Attempts, it.ErrKind, it.ErrMsg)
			if err != nil {
				return fmt.Errorf("item %s: %w", it.ItemID, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				// Already stored. A stored answer stays (a resumed or
				// repeated save); a stored failure is replaced by this
				// new attempt (a retry), keeping the spend of both.
				var oldKind string
				if err := tx.QueryRowContext(ctx, `SELECT err_kind FROM item_results WHERE run_id = ? AND item_id = ? AND repeat = ?`,
					runID, it.ItemID, it.Repeat).Scan(&oldKind); err != nil {
					return fmt.Errorf("item %s: %w", it.ItemID, err)
				}
				if oldKind == "" {
					continue
				}
				if _, err := tx.ExecContext(ctx, `UPDATE item_results SET seq = ?, latency_ms = ?, input_tokens = input_tokens + ?,
					output_tokens = output_tokens + ?, cost_usd = cost_usd + ?, model = ?, request_id = ?, attempts = attempts + ?,
					err_kind = ?, err_msg = ? WHERE run_id = ? AND item_id = ? AND repeat = ?`,
					it.Seq, it.LatencyMS, it.Usage.InputTokens, it.Usage.OutputTokens, it.CostUSD, it.Model, it.RequestID, it.Attempts,
					it.ErrKind, it.ErrMsg, runID, it.ItemID, it.Repeat); err != nil {
					return fmt.Errorf("item %s: %w", it.ItemID, err)
				}
				if _, err := tx.ExecContext(ctx, `DELETE FROM answers WHERE run_id = ? AND item_id = ? AND repeat = ?`,
					runID, it.ItemID, it.Repeat); err != nil {
					return fmt.Errorf("item %s: %w", it.ItemID, err)
				}
				replaced++
				errs-- // the old failure is gone; the new one counts below
			} else {
				added++
			}
			if it.ErrKind != "" {
				errs++
			}
			in += it.Usage.InputTokens
			out += it.Usage.OutputTokens
			cost += it.CostUSD
			if it.Model != "" {
				models[it.Model] = true
			}
			for j := range it.Answers {
				a := &it.Answers[j]
				var args [23]any
				args[0], args[1], args[2], args[3], args[4] = runID, it.ItemID, a.QuestionID, it.Repeat, it.Seq
				args[6] = a.Decided
				args[17] = a.LatencyMS
				if a.Label != nil {
					args[18] = int64(*a.Label)
				}
				args[19], args[20], args[21] = a.LabelText, a.ErrKind, a.ErrMsg
				args[5], args[13], args[14], args[15], args[16] = "", "", "", "", ""
				if an := a.Answer; an != nil {
					args[5] = string(an.Type)
					switch an.Type {
					case provider.Noul:
						args[7] = an.P
					case provider.Score:
						args[8] = an.Score
					case provider.Choice:
						args[9] = an.Choice
					}
					if an.HasConfidence {
						args[10] = an.Confidence
					}
					if an.Probs != nil {
						buf = appendFloats(buf[:0], an.Probs)
						args[11] = string(buf)
					}
					if an.Type == provider.Box {
						// A box has no distribution: its probs column holds
						// the edges [top,bottom,left,right], so metrics read
						// them without the raw bytes.
						args[11] = nil
						if e, ok := an.BoxOf(); ok {
							buf = appendFloats(buf[:0], []float64{e.Top, e.Bottom, e.Left, e.Right})
							args[11] = string(buf)
						}
					}
					if an.Raw != nil {
						packed, dict, err := db.packer.pack(ctx, tx, runID, a.QuestionID, an.Raw, newDicts)
						if err != nil {
							return fmt.Errorf("item %s question %s: %w", it.ItemID, a.QuestionID, err)
						}
						args[12] = packed
						if dict != 0 {
							args[22] = dict
						}
					}
					args[13] = string(an.Provenance.Source)
					args[14] = an.Provenance.Model
					if !an.Provenance.RecordedAt.IsZero() {
						args[15] = an.Provenance.RecordedAt.UTC().Format(time.RFC3339Nano)
					}
					args[16] = an.Provenance.Origin
				}
				if _, err := sa.ExecContext(ctx, args[:]...); err != nil {
					return fmt.Errorf("item %s question %s: %w", it.ItemID, a.QuestionID, err)
				}
			}
		}
		if added == 0 && replaced == 0 {
			return nil
		}
		// The run changed: a summary computed before no longer holds.
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_summaries WHERE run_id = ?`, runID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET done = done + ?, errors = errors + ?, input_tokens = input_tokens + ?,
			output_tokens = output_tokens + ?, cost_usd = cost_usd + ?, updated_at = ? WHERE id = ?`,
			added, errs, in, out, cost, now(), runID); err != nil {
			return err
		}
		if len(models) > 0 {
			return mergeModels(ctx, tx, runID, models)
		}
		return nil
	})
	if err != nil {
		db.packer.forget(newDicts)
		return 0, fmt.Errorf("save items of run %s: %w", runID, err)
	}
	db.packer.remember(newDicts)
	return added + replaced, nil
}

// mergeModels adds newly seen resolved models to the run's list.
func mergeModels(ctx context.Context, tx *sql.Tx, runID string, seen map[string]bool) error {
	var cur string
	if err := tx.QueryRowContext(ctx, `SELECT models FROM runs WHERE id = ?`, runID).Scan(&cur); err != nil {
		return err
	}
	var list []string
	_ = json.Unmarshal([]byte(cur), &list)
	have := map[string]bool{}
	for _, m := range list {
		have[m] = true
	}
	changed := false
	for m := range seen {
		if !have[m] {
			list = append(list, m)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	b, _ := json.Marshal(list)
	_, err := tx.ExecContext(ctx, `UPDATE runs SET models = ? WHERE id = ?`, string(b), runID)
	return err
}

// appendFloats writes ps as a JSON array, each number in its shortest
// round-tripping form.
func appendFloats(b []byte, ps []float64) []byte {
	b = append(b, '[')
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, p, 'g', -1, 64)
	}
	return append(b, ']')
}

// DoneItems returns the item × repeat pairs of run already stored (answered
// or failed), for resuming.
func (db *DB) DoneItems(ctx context.Context, runID string) (map[ItemKey]bool, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT item_id, repeat FROM item_results WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("stored items of run %s: %w", runID, err)
	}
	defer rows.Close()
	out := map[ItemKey]bool{}
	for rows.Next() {
		var k ItemKey
		if err := rows.Scan(&k.ItemID, &k.Repeat); err != nil {
			return nil, fmt.Errorf("stored items of run %s: %w", runID, err)
		}
		out[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("stored items of run %s: %w", runID, err)
	}
	return out, nil
}

// FailedKeys returns run's failed item × repeats with their error kind, so
// a resume can ask them again (--retry-errors, or failures that were ours,
// such as a local write error).
func (db *DB) FailedKeys(ctx context.Context, runID string) (map[ItemKey]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT item_id, repeat, err_kind FROM item_results WHERE run_id = ? AND err_kind != ''`, runID)
	if err != nil {
		return nil, fmt.Errorf("failed items of run %s: %w", runID, db.check(err))
	}
	defer rows.Close()
	out := map[ItemKey]string{}
	for rows.Next() {
		var k ItemKey
		var kind string
		if err := rows.Scan(&k.ItemID, &k.Repeat, &kind); err != nil {
			return nil, fmt.Errorf("failed items of run %s: %w", runID, err)
		}
		out[k] = kind
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("failed items of run %s: %w", runID, db.check(err))
	}
	return out, nil
}

// ForEachItemResult streams run's item × repeat rows in dataset order
// (answers not filled in).
func (db *DB) ForEachItemResult(ctx context.Context, runID string, fn func(*ItemResult) error) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT item_id, seq, repeat, latency_ms, input_tokens, output_tokens, cost_usd, model,
		request_id, attempts, err_kind, err_msg FROM item_results WHERE run_id = ? ORDER BY seq, repeat`, runID)
	if err != nil {
		return fmt.Errorf("items of run %s: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var it ItemResult
		if err := rows.Scan(&it.ItemID, &it.Seq, &it.Repeat, &it.LatencyMS, &it.Usage.InputTokens, &it.Usage.OutputTokens, &it.CostUSD,
			&it.Model, &it.RequestID, &it.Attempts, &it.ErrKind, &it.ErrMsg); err != nil {
			return fmt.Errorf("items of run %s: %w", runID, err)
		}
		if err := fn(&it); err != nil {
			return err
		}
	}
	return rows.Err()
}

// FailedItems returns up to limit of run's failed item × repeats in dataset
// order, with their error kind and message.
func (db *DB) FailedItems(ctx context.Context, runID string, limit int) ([]ItemResult, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT item_id, seq, repeat, attempts, err_kind, err_msg FROM item_results
		WHERE run_id = ? AND err_kind != '' ORDER BY seq, repeat LIMIT ?`, runID, limit)
	if err != nil {
		return nil, fmt.Errorf("failed items of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []ItemResult
	for rows.Next() {
		var it ItemResult
		if err := rows.Scan(&it.ItemID, &it.Seq, &it.Repeat, &it.Attempts, &it.ErrKind, &it.ErrMsg); err != nil {
			return nil, fmt.Errorf("failed items of run %s: %w", runID, err)
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// ForEachAnswer streams run's answers in dataset order (then question id,
// then repeat). fn must not keep a after it returns unless it copies it; the
// Answer it points to is fresh for each call.
func (db *DB) ForEachAnswer(ctx context.Context, runID string, fn func(*ItemAnswer) error) error {
	return db.forEachAnswer(ctx, runID, answerFilter{}, true, fn)
}

// ItemAnswers returns one item's answers in run (every question and
// repeat, raw bytes included): what a screen shows of an item picked from
// a large run without reading the run.
func (db *DB) ItemAnswers(ctx context.Context, runID, itemID string) ([]ItemAnswer, error) {
	var out []ItemAnswer
	err := db.forEachAnswer(ctx, runID, answerFilter{item: itemID}, true, func(a *ItemAnswer) error {
		out = append(out, *a)
		return nil
	})
	return out, err
}

// ForEachAnswerNoRaw is ForEachAnswer without each answer's Raw (nil): what
// metrics and comparisons read, without the bytes as received, so a large
// run's answers are read faster and held in less memory.
func (db *DB) ForEachAnswerNoRaw(ctx context.Context, runID string, fn func(*ItemAnswer) error) error {
	return db.forEachAnswer(ctx, runID, answerFilter{}, false, fn)
}

// ForEachQuestionAnswerNoRaw is ForEachAnswerNoRaw for one question's
// answers only (in dataset order, then repeat): what a report or a
// comparison reads question by question, so a large run never has more
// than one question's answers in memory.
func (db *DB) ForEachQuestionAnswerNoRaw(ctx context.Context, runID, questionID string, fn func(*ItemAnswer) error) error {
	return db.forEachAnswer(ctx, runID, answerFilter{question: questionID, byQuestion: true}, false, fn)
}

// answerFilter narrows forEachAnswer to one item or one question.
type answerFilter struct {
	item       string
	question   string
	byQuestion bool
}

// forEachAnswer streams run's answers that pass f.
func (db *DB) forEachAnswer(ctx context.Context, runID string, f answerFilter, withRaw bool, fn func(*ItemAnswer) error) error {
	rawCol := "raw, raw_dict"
	if !withRaw {
		rawCol = "NULL, NULL"
	}
	where, args := "run_id = ?", []any{runID}
	switch {
	case f.item != "":
		where, args = "run_id = ? AND item_id = ?", []any{runID, f.item}
	case f.byQuestion:
		where, args = "run_id = ? AND question_id = ?", []any{runID, f.question}
	}
	unpack := rawUnpacker{db: db.sql}
	rows, err := db.sql.QueryContext(ctx, `SELECT item_id, question_id, repeat, seq, type, decided, p, score, choice, confidence,
		probs, `+rawCol+`, source, model, recorded_at, origin, latency_ms, label_index, label_text, err_kind, err_msg
		FROM answers WHERE `+where+` ORDER BY seq, question_id, repeat`, args...)
	if err != nil {
		return fmt.Errorf("answers of run %s: %w", runID, err)
	}
	defer rows.Close()
	// Text columns are scanned as raw bytes and interned: a run's rows
	// repeat a few types, models, sources and labels, and each item's id
	// and time over its questions, so a large run's answers share them
	// instead of holding a copy per row.
	var in interner
	var itemB, qidB, typB, decB, choiceB, probsB, sourceB, modelB, recB, originB, labelB, ekB, emB sql.RawBytes
	for rows.Next() {
		var a ItemAnswer
		var p, score, conf sql.NullFloat64
		var raw []byte
		var rawDict sql.NullInt64
		var label sql.NullInt64
		if err := rows.Scan(&itemB, &qidB, &a.Repeat, &a.Seq, &typB, &decB, &p, &score, &choiceB, &conf,
			&probsB, &raw, &rawDict, &sourceB, &modelB, &recB, &originB, &a.LatencyMS, &label, &labelB, &ekB, &emB); err != nil {
			return fmt.Errorf("answers of run %s: %w", runID, err)
		}
		a.ItemID, a.QuestionID, a.Decided = in.last(itemB), in.get(qidB), in.get(decB)
		a.LabelText, a.ErrKind, a.ErrMsg = in.get(labelB), in.get(ekB), in.get(emB)
		typ, source, model, recorded, origin := in.get(typB), in.get(sourceB), in.get(modelB), in.lastTime(recB), in.get(originB)
		choice := in.get(choiceB)
		probs := probsB
		if label.Valid {
			l := int(label.Int64)
			a.Label = &l
		}
		if a.ErrKind == "" && typ != "" {
			if rawDict.Valid {
				var err error
				if raw, err = unpack.unpack(ctx, raw, rawDict.Int64); err != nil {
					return fmt.Errorf("answers of run %s: item %s question %s: %w", runID, a.ItemID, a.QuestionID, err)
				}
			}
			an := &provider.Answer{ID: a.QuestionID, Type: provider.QuestionType(typ), P: p.Float64, Score: score.Float64,
				Choice: choice, Confidence: conf.Float64, HasConfidence: conf.Valid, Raw: raw,
				Provenance: provider.Provenance{Source: provider.Source(source), Model: model, Origin: origin}}
			an.Provenance.RecordedAt = recorded
			if probs != nil {
				var err error
				if an.Probs, err = parseFloats(probs); err != nil {
					return fmt.Errorf("answers of run %s: item %s question %s: bad stored distribution: %w", runID, a.ItemID, a.QuestionID, err)
				}
			}
			if an.Type == provider.Box && an.Probs != nil {
				// A box's probs column holds its edges (see SaveItems).
				if len(an.Probs) != 4 {
					return fmt.Errorf("answers of run %s: item %s question %s: bad stored box: %d numbers, want 4 (top, bottom, left, right)", runID, a.ItemID, a.QuestionID, len(an.Probs))
				}
				an.Box = &provider.Edges{Top: an.Probs[0], Bottom: an.Probs[1], Left: an.Probs[2], Right: an.Probs[3]}
				an.Probs = nil
			}
			a.Answer = an
		}
		if err := fn(&a); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("answers of run %s: %w", runID, err)
	}
	return nil
}

// RunAnswers returns every answer of run in dataset order.
func (db *DB) RunAnswers(ctx context.Context, runID string) ([]ItemAnswer, error) {
	var out []ItemAnswer
	err := db.ForEachAnswer(ctx, runID, func(a *ItemAnswer) error {
		out = append(out, *a)
		return nil
	})
	return out, err
}

// interner shares the strings answer rows repeat. Its map is bounded, so
// a column of distinct values (a noul's P as text, error messages) costs
// no more than one string per row.
type interner struct {
	m      map[string]string
	lastS  string
	lastT  string
	lastTm time.Time
}

// maxInterned bounds interner.m.
const maxInterned = 4096

func (in *interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if in.m == nil {
		in.m = make(map[string]string)
	}
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	return s
}

// last returns b as a string, the previous call's when equal (an item's
// rows come together).
func (in *interner) last(b []byte) string {
	if string(b) != in.lastS {
		in.lastS = string(b)
	}
	return in.lastS
}

// lastTime parses a stored RFC 3339 time, reusing the previous row's when
// the text is the same (an item's answers share one recorded_at).
func (in *interner) lastTime(b []byte) time.Time {
	if len(b) == 0 {
		return time.Time{}
	}
	if string(b) != in.lastT {
		in.lastT = string(b)
		in.lastTm, _ = time.Parse(time.RFC3339Nano, in.lastT)
	}
	return in.lastTm
}

// parseFloats reads a distribution as appendFloats writes it ([a,b,…],
// each number in its shortest round-tripping form), into a slice of
// exactly its length; anything else goes through encoding/json.
func parseFloats(b []byte) ([]float64, error) {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, fmt.Errorf("not a JSON array: %.40q", b)
	}
	body := b[1 : len(b)-1]
	if len(body) == 0 {
		return []float64{}, nil
	}
	out := make([]float64, 0, bytes.Count(body, []byte{','})+1)
	for len(body) > 0 {
		i := bytes.IndexByte(body, ',')
		tok := body
		if i >= 0 {
			tok, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		f, err := strconv.ParseFloat(string(tok), 64)
		if err != nil {
			var v []float64
			if jerr := json.Unmarshal(b, &v); jerr != nil {
				return nil, jerr
			}
			return v, nil
		}
		out = append(out, f)
	}
	return out, nil
}
