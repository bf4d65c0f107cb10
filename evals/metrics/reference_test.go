package metrics

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/jevlab/jevlab/provider"
)

// reference is testdata/reference.json, written by testdata/reference.py
// with scikit-learn and statsmodels (see testdata/README.md).
type reference struct {
	SmallNoul   refNoul   `json:"small_noul"`
	SmallChoice refChoice `json:"small_choice"`
	SmallScore  refScore  `json:"small_score"`
	McNemar     []struct {
		B, C int
		P    float64
	} `json:"mcnemar"`
	EMSame     refNoul   `json:"entity_merge_same_entity"`
	EMAction   refChoice `json:"entity_merge_action"`
	CSSupports refNoul   `json:"citation_support_supports"`
	CSCoverage refScore  `json:"citation_support_coverage"`
	EMMcNemar  struct {
		B, C int
		P    float64
	} `json:"entity_merge_mcnemar_noul_vs_action"`
}

type refCal struct {
	ProbTrue []float64 `json:"prob_true"`
	ProbPred []float64 `json:"prob_pred"`
	Counts   []int     `json:"counts"`
	ECE      float64   `json:"ece"`
}

type refNoul struct {
	P        []float64 `json:"p"`
	Y        []int     `json:"y"`
	N        int       `json:"n"`
	Accuracy float64   `json:"accuracy"`
	Brier    float64   `json:"brier"`
	LogLoss  float64   `json:"log_loss"`
	AUROC    float64   `json:"auroc"`
	AUPRC    float64   `json:"auprc"`
	Uniform  refCal    `json:"calibration_uniform"`
	Quantile refCal    `json:"calibration_quantile"`
}

type refChoice struct {
	Probs     [][]float64 `json:"probs"`
	Y         []int       `json:"y"`
	Dec       []int       `json:"dec"`
	N         int         `json:"n"`
	Accuracy  float64     `json:"accuracy"`
	MacroF1   float64     `json:"macro_f1"`
	Confusion [][]int     `json:"confusion"`
	Brier     float64     `json:"brier"`
	LogLoss   float64     `json:"log_loss"`
	Uniform   refCal      `json:"calibration_uniform"`
	Quantile  refCal      `json:"calibration_quantile"`
}

type refScore struct {
	Probs            [][]float64 `json:"probs"`
	Score            []float64   `json:"score"`
	Y                []int       `json:"y"`
	N                int         `json:"n"`
	ExactArgmax      float64     `json:"exact_argmax"`
	WithinOneArgmax  float64     `json:"within_one_argmax"`
	ExactNearest     float64     `json:"exact_nearest"`
	WithinOneNearest float64     `json:"within_one_nearest"`
	Disagreement     float64     `json:"disagreement"`
	MAE              float64     `json:"mae"`
	RMSE             float64     `json:"rmse"`
	QWK              float64     `json:"qwk"`
	Spearman         float64     `json:"spearman"`
	RPS              float64     `json:"rps"`
}

func loadReference(t *testing.T) *reference {
	t.Helper()
	b, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("testdata/reference.json: %v", err)
	}
	return &r
}

func checkCal(t *testing.T, name string, bins []Bin, ece float64, ref refCal) {
	t.Helper()
	if len(bins) != len(ref.Counts) {
		t.Fatalf("%s: %d non-empty bins, calibration_curve has %d (%v)", name, len(bins), len(ref.Counts), bins)
	}
	for i, b := range bins {
		if b.N != ref.Counts[i] || !closeTo(b.Observed, ref.ProbTrue[i], 1e-9) || !closeTo(b.Confidence, ref.ProbPred[i], 1e-9) {
			t.Errorf("%s bin %d: n=%d observed=%v confidence=%v, want n=%d %v %v", name, i, b.N, b.Observed, b.Confidence, ref.Counts[i], ref.ProbTrue[i], ref.ProbPred[i])
		}
	}
	check(t, name+" ece", ece, ref.ECE)
}

func checkNoul(t *testing.T, r *QuestionReport, ref refNoul) {
	t.Helper()
	if r.Labelled != ref.N {
		t.Fatalf("labelled %d, want %d", r.Labelled, ref.N)
	}
	check(t, "accuracy", r.Accuracy.Value, ref.Accuracy)
	check(t, "brier", r.Brier.Value, ref.Brier)
	check(t, "log_loss", r.LogLoss.Value, ref.LogLoss)
	check(t, "auroc", r.Noul.AUROC.Value, ref.AUROC)
	check(t, "auprc", r.Noul.AUPRC.Value, ref.AUPRC)
	checkCal(t, "uniform", r.Reliability, r.ECE.Value, ref.Uniform)
	checkCal(t, "quantile", r.ReliabilityMass, r.ECEMass.Value, ref.Quantile)
}

func checkChoice(t *testing.T, r *QuestionReport, ref refChoice) {
	t.Helper()
	if r.Labelled != ref.N {
		t.Fatalf("labelled %d, want %d", r.Labelled, ref.N)
	}
	check(t, "accuracy", r.Accuracy.Value, ref.Accuracy)
	check(t, "macro_f1", r.Choice.MacroF1.Value, ref.MacroF1)
	check(t, "brier", r.Brier.Value, ref.Brier)
	check(t, "log_loss", r.LogLoss.Value, ref.LogLoss)
	for i := range ref.Confusion {
		for j := range ref.Confusion[i] {
			if r.Choice.Confusion[i][j] != ref.Confusion[i][j] {
				t.Errorf("confusion[%d][%d] = %d, want %d", i, j, r.Choice.Confusion[i][j], ref.Confusion[i][j])
			}
		}
	}
	checkCal(t, "uniform", r.Reliability, r.ECE.Value, ref.Uniform)
	checkCal(t, "quantile", r.ReliabilityMass, r.ECEMass.Value, ref.Quantile)
}

func checkScore(t *testing.T, r *QuestionReport, ref refScore) {
	t.Helper()
	s := r.Score
	check(t, "exact_argmax", s.ExactArgmax.Value, ref.ExactArgmax)
	check(t, "within_one_argmax", s.WithinOneArgmax.Value, ref.WithinOneArgmax)
	check(t, "exact_nearest", s.ExactNearest.Value, ref.ExactNearest)
	check(t, "within_one_nearest", s.WithinOneNearest.Value, ref.WithinOneNearest)
	check(t, "disagreement", s.Disagreement, ref.Disagreement)
	check(t, "mae", s.MAE.Value, ref.MAE)
	check(t, "rmse", s.RMSE.Value, ref.RMSE)
	check(t, "qwk", s.QWK.Value, ref.QWK)
	check(t, "spearman", s.Spearman.Value, ref.Spearman)
	check(t, "rps", s.RPS.Value, ref.RPS)
}

var noBoot = Options{Bootstrap: -1, NoiseFloorDraws: -1}

func TestReferenceSmallVectors(t *testing.T) {
	ref := loadReference(t)
	t.Run("noul", func(t *testing.T) {
		var obs []Obs
		for i, p := range ref.SmallNoul.P {
			obs = append(obs, Obs{ItemID: string(rune('a' + i)), Answer: &provider.Answer{Type: provider.Noul, P: p}, Label: ref.SmallNoul.Y[i], HasLabel: true})
		}
		checkNoul(t, Compute(&provider.Question{Type: provider.Noul}, obs, noBoot), ref.SmallNoul)
	})
	t.Run("choice", func(t *testing.T) {
		q := &provider.Question{Type: provider.Choice, Options: []provider.Option{{Label: "a"}, {Label: "b"}, {Label: "c"}}}
		var obs []Obs
		for i, p := range ref.SmallChoice.Probs {
			a := &provider.Answer{Type: provider.Choice, Choice: q.Options[ref.SmallChoice.Dec[i]].Label, Probs: p}
			obs = append(obs, Obs{ItemID: string(rune('a' + i)), Answer: a, Label: ref.SmallChoice.Y[i], HasLabel: true})
		}
		checkChoice(t, Compute(q, obs, noBoot), ref.SmallChoice)
	})
	t.Run("score", func(t *testing.T) {
		q := &provider.Question{Type: provider.Score, Levels: []json.RawMessage{[]byte(`"0"`), []byte(`"1"`), []byte(`"2"`), []byte(`"3"`)}}
		var obs []Obs
		for i, p := range ref.SmallScore.Probs {
			a := &provider.Answer{Type: provider.Score, Score: ref.SmallScore.Score[i], Probs: p}
			obs = append(obs, Obs{ItemID: string(rune('a' + i)), Answer: a, Label: ref.SmallScore.Y[i], HasLabel: true})
		}
		checkScore(t, Compute(q, obs, noBoot), ref.SmallScore)
	})
}

func TestReferenceRecordings(t *testing.T) {
	ref := loadReference(t)
	em := loadRecording(t, "entity-merge", "recorded.jsonl")
	cs := loadRecording(t, "citation-support", "recorded.jsonl")
	t.Run("entity-merge/same_entity", func(t *testing.T) {
		checkNoul(t, Compute(em.question(t, "same_entity"), em.obs("same_entity"), noBoot), ref.EMSame)
	})
	t.Run("entity-merge/action", func(t *testing.T) {
		r := Compute(em.question(t, "action"), em.obs("action"), noBoot)
		checkChoice(t, r, ref.EMAction)
		// README: em-0048 (tie) and em-0289 answer an option that is not the
		// first highest probability.
		if r.Choice.ArgmaxDisagree != 2 {
			t.Errorf("argmax disagreements %d, want 2", r.Choice.ArgmaxDisagree)
		}
	})
	t.Run("citation-support/supports", func(t *testing.T) {
		checkNoul(t, Compute(cs.question(t, "supports"), cs.obs("supports"), noBoot), ref.CSSupports)
	})
	t.Run("citation-support/coverage", func(t *testing.T) {
		checkScore(t, Compute(cs.question(t, "coverage"), cs.obs("coverage"), noBoot), ref.CSCoverage)
	})
}
