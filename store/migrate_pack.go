package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jevlab/jevlab/provider"
)

// packBatch is how many item rows packAnswers reads at a time.
const packBatch = 500

// oldRaw is a raw answer as the answers table kept it.
type oldRaw struct {
	b    []byte
	dict int64
}

// packAnswers is migration 20261203_0900's Go step: it packs each item
// result's rows of the answers table into its item_results row, keeping
// raw answers exactly as they were stored (deflated or not), then drops
// the table. Answers whose item row is missing (none are written so) get
// an item row of their own, so none is lost.
func packAnswers(ctx context.Context, tx *sql.Tx, pr *progress) error {
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM item_results`).Scan(&total); err != nil {
		return fmt.Errorf("pack answers: %w", err)
	}
	// Orphan answers first get an item row to be packed into.
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO item_results (run_id, item_id, repeat, seq, latency_ms)
		SELECT a.run_id, a.item_id, a.repeat, min(a.seq), min(a.latency_ms) FROM answers a
		WHERE NOT EXISTS (SELECT 1 FROM item_results i WHERE i.run_id = a.run_id AND i.item_id = a.item_id AND i.repeat = a.repeat)
		GROUP BY a.run_id, a.item_id, a.repeat`); err != nil {
		return fmt.Errorf("pack answers: %w", err)
	}
	pr.start("packing each item's answers into one row", total)
	sel, err := tx.PrepareContext(ctx, `SELECT question_id, type, decided, p, score, choice, confidence, probs, raw, raw_dict,
		source, model, recorded_at, origin, latency_ms, label_index, label_text, err_kind, err_msg
		FROM answers WHERE run_id = ? AND item_id = ? AND repeat = ?`)
	if err != nil {
		return fmt.Errorf("pack answers: %w", err)
	}
	defer sel.Close()
	upd, err := tx.PrepareContext(ctx, `UPDATE item_results SET answers = ?, raws = ? WHERE run_id = ? AND item_id = ? AND repeat = ?`)
	if err != nil {
		return fmt.Errorf("pack answers: %w", err)
	}
	defer upd.Close()
	var packer rawPacker // dictionaries for packed items, this migration's own
	newDicts := map[string]int64{}
	type key struct {
		run, item string
		repeat    int
		latency   float64
	}
	var last key
	var done int64
	first := true
	for {
		rows, err := tx.QueryContext(ctx, `SELECT run_id, item_id, repeat, latency_ms FROM item_results
			WHERE ? OR (run_id, item_id, repeat) > (?, ?, ?) ORDER BY run_id, item_id, repeat LIMIT ?`,
			first, last.run, last.item, last.repeat, packBatch)
		if err != nil {
			return fmt.Errorf("pack answers: %w", err)
		}
		var batch []key
		for rows.Next() {
			var k key
			if err := rows.Scan(&k.run, &k.item, &k.repeat, &k.latency); err != nil {
				rows.Close()
				return fmt.Errorf("pack answers: %w", err)
			}
			batch = append(batch, k)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("pack answers: %w", err)
		}
		if len(batch) == 0 {
			break
		}
		first = false
		for _, k := range batch {
			it := ItemResult{ItemID: k.item, Repeat: k.repeat, LatencyMS: k.latency}
			raws, err := readOldAnswers(ctx, sel, k.run, &it)
			if err != nil {
				return fmt.Errorf("pack answers: run %s item %s: %w", k.run, k.item, err)
			}
			pk, err := encodeItem(&it, func(questionID string, _ []byte) (rawRef, bool, []byte, int64, error) {
				r := raws[questionID]
				return rawRef{}, false, r.b, r.dict, nil
			})
			if err != nil {
				return fmt.Errorf("pack answers: run %s item %s: %w", k.run, k.item, err)
			}
			packed, err := packItemWith(ctx, tx, &packer, k.run, pk.answers, newDicts)
			if err != nil {
				return fmt.Errorf("pack answers: run %s item %s: %w", k.run, k.item, err)
			}
			var rawCol any
			if pk.raws != nil {
				rawCol = pk.raws
			}
			if _, err := upd.ExecContext(ctx, packed, rawCol, k.run, k.item, k.repeat); err != nil {
				return fmt.Errorf("pack answers: run %s item %s: %w", k.run, k.item, err)
			}
			done++
			pr.update(done)
		}
		packer.remember(newDicts)
		clear(newDicts)
		last = batch[len(batch)-1]
	}
	pr.finish()
	for _, q := range []string{`DROP INDEX IF EXISTS answers_run_seq`, `DROP TABLE answers`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("pack answers: %w", err)
		}
	}
	return nil
}

// readOldAnswers fills it.Answers from run's rows of the answers table
// the way their reader did, and returns each answer's raw bytes as stored
// there, by question id (unique within an item × repeat).
func readOldAnswers(ctx context.Context, sel *sql.Stmt, run string, it *ItemResult) (map[string]oldRaw, error) {
	rows, err := sel.QueryContext(ctx, run, it.ItemID, it.Repeat)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	raws := map[string]oldRaw{}
	for rows.Next() {
		var a ItemAnswer
		var typ, source, model, recorded, origin, choice string
		var p, score, conf sql.NullFloat64
		var probs, raw []byte
		var rawDict, label sql.NullInt64
		var choiceN sql.NullString
		if err := rows.Scan(&a.QuestionID, &typ, &a.Decided, &p, &score, &choiceN, &conf, &probs, &raw, &rawDict,
			&source, &model, &recorded, &origin, &a.LatencyMS, &label, &a.LabelText, &a.ErrKind, &a.ErrMsg); err != nil {
			return nil, err
		}
		choice = choiceN.String
		a.ItemID, a.Repeat = it.ItemID, it.Repeat
		if label.Valid {
			l := int(label.Int64)
			a.Label = &l
		}
		if a.ErrKind == "" && typ != "" {
			an := &provider.Answer{ID: a.QuestionID, Type: provider.QuestionType(typ), P: p.Float64, Score: score.Float64,
				Choice: choice, Confidence: conf.Float64, HasConfidence: conf.Valid, Raw: raw,
				Provenance: provider.Provenance{Source: provider.Source(source), Model: model, Origin: origin}}
			if recorded != "" {
				an.Provenance.RecordedAt, _ = time.Parse(time.RFC3339Nano, recorded)
			}
			if probs != nil {
				if an.Probs, err = parseFloats(probs); err != nil {
					return nil, fmt.Errorf("question %s: bad stored distribution: %w", a.QuestionID, err)
				}
			}
			if an.Type == provider.Box && an.Probs != nil {
				// The probs column held a box's edges.
				if len(an.Probs) != 4 {
					return nil, fmt.Errorf("question %s: bad stored box: %d numbers, want 4 (top, bottom, left, right)", a.QuestionID, len(an.Probs))
				}
				an.Box = &provider.Edges{Top: an.Probs[0], Bottom: an.Probs[1], Left: an.Probs[2], Right: an.Probs[3]}
				an.Probs = nil
			}
			a.Answer = an
			if raw != nil {
				raws[a.QuestionID] = oldRaw{b: raw, dict: rawDict.Int64}
			}
		}
		it.Answers = append(it.Answers, a)
	}
	return raws, rows.Err()
}

// compactLayout is migration 20261203_0900's Go step: the answers packed
// into their item rows, the answer index refilled in its new form, and the
// responses and dataset items packed.
func compactLayout(ctx context.Context, tx *sql.Tx, pr *progress) error {
	if err := packAnswers(ctx, tx, pr); err != nil {
		return err
	}
	if err := backfillAnswerIndex(ctx, tx, pr); err != nil {
		return err
	}
	if err := packResponses(ctx, tx, pr); err != nil {
		return err
	}
	return packDatasetItems(ctx, tx, pr)
}

// packResponses deflates every stored response against its run's first
// (exchanges with no run share one dictionary), keeping the bytes as they
// are where that gains nothing.
func packResponses(ctx context.Context, tx *sql.Tx, pr *progress) error {
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM exchanges WHERE resp_dict IS NULL`).Scan(&total); err != nil {
		return fmt.Errorf("pack responses: %w", err)
	}
	pr.start("packing stored responses", total)
	upd, err := tx.PrepareContext(ctx, `UPDATE exchanges SET response = ?, resp_dict = ? WHERE id = ?`)
	if err != nil {
		return fmt.Errorf("pack responses: %w", err)
	}
	defer upd.Close()
	var packer rawPacker
	newDicts := map[string]int64{}
	type resp struct {
		id    int64
		runID string
		b     []byte
	}
	var last, done int64
	for {
		rows, err := tx.QueryContext(ctx, `SELECT id, ifnull(run_id, ''), response FROM exchanges WHERE id > ? AND resp_dict IS NULL ORDER BY id LIMIT ?`,
			last, backfillBatch)
		if err != nil {
			return fmt.Errorf("pack responses: %w", err)
		}
		var batch []resp
		for rows.Next() {
			var r resp
			if err := rows.Scan(&r.id, &r.runID, &r.b); err != nil {
				rows.Close()
				return fmt.Errorf("pack responses: %w", err)
			}
			batch = append(batch, r)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("pack responses: %w", err)
		}
		if len(batch) == 0 {
			pr.finish()
			return nil
		}
		for _, r := range batch {
			b, dict, err := packer.pack(ctx, tx, r.runID, respDictQuestion, r.b, newDicts)
			if err != nil {
				return fmt.Errorf("pack responses: exchange %d: %w", r.id, err)
			}
			if dict != 0 {
				if _, err := upd.ExecContext(ctx, b, dict, r.id); err != nil {
					return fmt.Errorf("pack responses: exchange %d: %w", r.id, err)
				}
			}
			done++
			pr.update(done)
		}
		packer.remember(newDicts)
		clear(newDicts)
		last = batch[len(batch)-1].id
	}
}

// packDatasetItems deflates every stored dataset item's state and labels
// against its dataset's first item's.
func packDatasetItems(ctx context.Context, tx *sql.Tx, pr *progress) error {
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM dataset_items`).Scan(&total); err != nil {
		return fmt.Errorf("pack dataset items: %w", err)
	}
	pr.start("packing dataset items", total)
	upd, err := tx.PrepareContext(ctx, `UPDATE dataset_items SET state = ?, labels = ?, state_dict = ?, labels_dict = ? WHERE dataset_hash = ? AND seq = ?`)
	if err != nil {
		return fmt.Errorf("pack dataset items: %w", err)
	}
	defer upd.Close()
	var packer rawPacker
	newDicts := map[string]int64{}
	type row struct {
		hash string
		it   DatasetItem
	}
	var last row
	var done int64
	first := true
	for {
		rows, err := tx.QueryContext(ctx, `SELECT dataset_hash, seq, state, labels FROM dataset_items
			WHERE ? OR (dataset_hash, seq) > (?, ?) ORDER BY dataset_hash, seq LIMIT ?`, first, last.hash, last.it.Seq, packBatch)
		if err != nil {
			return fmt.Errorf("pack dataset items: %w", err)
		}
		var batch []row
		for rows.Next() {
			var r row
			var state, labels []byte
			if err := rows.Scan(&r.hash, &r.it.Seq, &state, &labels); err != nil {
				rows.Close()
				return fmt.Errorf("pack dataset items: %w", err)
			}
			r.it.State, r.it.Labels = state, labels
			batch = append(batch, r)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("pack dataset items: %w", err)
		}
		if len(batch) == 0 {
			pr.finish()
			return nil
		}
		first = false
		for _, r := range batch {
			state, labels, sd, ld, err := packDatasetItem(ctx, tx, &packer, r.hash, r.it, newDicts)
			if err != nil {
				return fmt.Errorf("pack dataset items: %w", err)
			}
			if _, err := upd.ExecContext(ctx, state, labels, sd, ld, r.hash, r.it.Seq); err != nil {
				return fmt.Errorf("pack dataset items: %w", err)
			}
			done++
			pr.update(done)
		}
		packer.remember(newDicts)
		clear(newDicts)
		last = batch[len(batch)-1]
	}
}
