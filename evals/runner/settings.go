package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jevlab/jevlab/store"
)

// Settings are the choices a run was started with. They are stored with
// the run (store.Run.Settings) so a resume restores every one of them
// exactly, whoever starts it (the eval command, the workbench).
//
// The runner itself applies Repeat, Concurrency and MaxCostUSD (it fills
// them from Config); the caller applies the rest when it builds the
// provider and the dataset source, taking them from LoadResume on a resume.
type Settings struct {
	// Set and Data are the question-set file and the dataset, absolute.
	Set  string `json:"set,omitempty"`
	Data string `json:"data,omitempty"`
	// IDField, StateField and Labels map dataset fields (--id-field,
	// --state-field, --label QUESTION=FIELD).
	IDField     string   `json:"id_field,omitempty"`
	StateField  string   `json:"state_field,omitempty"`
	StateFields string   `json:"state_fields,omitempty"`
	Labels      []string `json:"labels,omitempty"`
	// Model overrides the set's model (--model); "" keeps the set's.
	Model string `json:"model_override,omitempty"`
	// Fixtures are the fixture files named on the command line, absolute;
	// Record is the fixture file new answers were appended to (--record),
	// and AllowPaths the folders a set's paths may name (--allow-path).
	Fixtures   []string `json:"fixtures,omitempty"`
	Record     string   `json:"record,omitempty"`
	AllowPaths []string `json:"allow_paths,omitempty"`
	// Fresh skips the answer cache; Offline never calls out.
	Fresh   bool `json:"fresh"`
	Offline bool `json:"offline"`
	// RPS bounds requests per second (0 = none); Timeout is per attempt.
	RPS     float64  `json:"rps"`
	Timeout Duration `json:"timeout,omitempty"`
	// ImportedFrom and Source say where an imported run came from (its
	// format and file); empty for runs asked here.
	ImportedFrom string `json:"imported_from,omitempty"`
	Source       string `json:"source,omitempty"`
	// Probe, BaseRun, ProbeSeed and ProbeParams link a probe run (jevlab
	// probe, evals/probe) to the run it is measured against: its kind, the
	// base run, its seed and its options.
	Probe       string          `json:"probe,omitempty"`
	BaseRun     string          `json:"base_run,omitempty"`
	ProbeSeed   uint64          `json:"seed,omitempty"`
	ProbeParams json.RawMessage `json:"probe_params,omitempty"`
	// Repeat, Concurrency and MaxCostUSD are Config's, recorded.
	Repeat      int     `json:"repeat"`
	Concurrency int     `json:"concurrency"`
	MaxCostUSD  float64 `json:"max_cost_usd,omitempty"`
	// Variants are the derived ids (queue~v2) of the variants asked
	// beside their questions (Config.Variants).
	Variants []string `json:"variants,omitempty"`
	// Split is the part of the dataset asked (Config.Split).
	Split string `json:"split,omitempty"`
}

// Duration is a time.Duration stored as its text ("30s").
type Duration time.Duration

// MarshalJSON writes d as text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads text ("30s") or nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("timeout %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("timeout: want a duration such as \"30s\": %w", err)
	}
	*d = Duration(n)
	return nil
}

// ParseSettings reads the settings stored with a run. Runs stored before
// every setting was recorded lack some: those read as zero (Repeat from
// the run's own column).
func ParseSettings(r *store.Run) (Settings, error) {
	var s Settings
	if len(r.Settings) > 0 {
		if err := json.Unmarshal(r.Settings, &s); err != nil {
			return s, fmt.Errorf("run %s: stored settings: %w", r.ID, err)
		}
	}
	if s.Repeat < 1 {
		s.Repeat = max(r.Repeat, 1)
	}
	return s, nil
}

// LoadResume finds the run ref names (id, prefix, latest) and the settings
// it started with, for a caller about to resume it: build the provider
// and the source from these (after Merge with what the user gave again),
// then call Run with Config.Resume set to the run's id.
func LoadResume(ctx context.Context, db *store.DB, ref string) (*store.Run, Settings, error) {
	r, err := db.ResolveRun(ctx, ref)
	if err != nil {
		return nil, Settings{}, &InputError{fmt.Errorf("resume: %w", err)}
	}
	s, err := ParseSettings(r)
	if err != nil {
		return nil, Settings{}, &InputError{fmt.Errorf("resume: %w", err)}
	}
	return r, s, nil
}

// Setting names, as the eval command's flags spell them.
const (
	FlagData        = "data"
	FlagIDField     = "id-field"
	FlagStateField  = "state-field"
	FlagStateFields = "state-fields"
	FlagLabel       = "label"
	FlagModel       = "model"
	FlagFixtures    = "fixtures"
	FlagRecord      = "record"
	FlagAllowPath   = "allow-path"
	FlagFresh       = "fresh"
	FlagOffline     = "offline"
	FlagRPS         = "rps"
	FlagTimeout     = "timeout"
	FlagRepeat      = "repeat"
	FlagConcurrency = "concurrency"
	FlagMaxCost     = "max-cost"
)

// Merge applies to the stored settings s what the user gave again on a
// resume: given holds the values, and changed says which were given. A
// setting given with the stored value changes nothing. One that differs
// either overrides (throughput and budget: concurrency, rps, timeout,
// max-cost; and where the inputs are read from and answers recorded to:
// data, fixtures, record, allow-path — the run still checks the set's and
// the dataset's content is the run's), with a note saying so, or is
// refused, because it would change what the run measures (model, repeat,
// fresh, offline, the dataset field mapping).
func (s Settings) Merge(given Settings, changed func(flag string) bool) (Settings, []string, error) {
	out := s
	var notes, refused []string
	override := func(flag string, differs bool, was, now string, apply func()) {
		if !changed(flag) || !differs {
			return
		}
		notes = append(notes, fmt.Sprintf("--%s %s overrides the run's %s (kept for later resumes)", flag, now, was))
		apply()
	}
	refuse := func(flag string, differs bool, was, now string) {
		if changed(flag) && differs {
			refused = append(refused, fmt.Sprintf("--%s %s (the run has %s)", flag, now, was))
		}
	}
	orNone := func(v string) string {
		if v == "" {
			return "none"
		}
		return v
	}
	override(FlagData, given.Data != s.Data, orNone(s.Data), given.Data, func() { out.Data = given.Data })
	override(FlagFixtures, !slices.Equal(given.Fixtures, s.Fixtures), orNone(strings.Join(s.Fixtures, ",")), orNone(strings.Join(given.Fixtures, ",")),
		func() { out.Fixtures = given.Fixtures })
	override(FlagRecord, given.Record != s.Record, orNone(s.Record), orNone(given.Record), func() { out.Record = given.Record })
	override(FlagAllowPath, !slices.Equal(given.AllowPaths, s.AllowPaths), orNone(strings.Join(s.AllowPaths, ",")), orNone(strings.Join(given.AllowPaths, ",")),
		func() { out.AllowPaths = given.AllowPaths })
	override(FlagConcurrency, given.Concurrency != s.Concurrency, fmt.Sprint(s.Concurrency), fmt.Sprint(given.Concurrency),
		func() { out.Concurrency = given.Concurrency })
	override(FlagRPS, given.RPS != s.RPS, fmt.Sprint(s.RPS), fmt.Sprint(given.RPS), func() { out.RPS = given.RPS })
	override(FlagTimeout, given.Timeout != s.Timeout, time.Duration(s.Timeout).String(), time.Duration(given.Timeout).String(),
		func() { out.Timeout = given.Timeout })
	if changed(FlagMaxCost) && given.MaxCostUSD == 0 && s.MaxCostUSD > 0 {
		refused = append(refused, fmt.Sprintf("--max-cost 0 (the run is capped at $%g; a resume can raise the cap, not lift it: give a higher one)", s.MaxCostUSD))
	} else {
		override(FlagMaxCost, given.MaxCostUSD != s.MaxCostUSD, costText(s.MaxCostUSD), costText(given.MaxCostUSD),
			func() { out.MaxCostUSD = given.MaxCostUSD })
	}
	refuse(FlagModel, given.Model != s.Model, orNone(s.Model), orNone(given.Model))
	refuse(FlagRepeat, given.Repeat != s.Repeat, fmt.Sprint(s.Repeat), fmt.Sprint(given.Repeat))
	refuse(FlagFresh, given.Fresh != s.Fresh, fmt.Sprint(s.Fresh), fmt.Sprint(given.Fresh))
	refuse(FlagOffline, given.Offline != s.Offline, fmt.Sprint(s.Offline), fmt.Sprint(given.Offline))
	refuse(FlagIDField, given.IDField != s.IDField, orNone(s.IDField), orNone(given.IDField))
	refuse(FlagStateField, given.StateField != s.StateField, orNone(s.StateField), orNone(given.StateField))
	refuse(FlagStateFields, given.StateFields != s.StateFields, orNone(s.StateFields), orNone(given.StateFields))
	refuse(FlagLabel, !slices.Equal(given.Labels, s.Labels), orNone(strings.Join(s.Labels, ",")), orNone(strings.Join(given.Labels, ",")))
	if len(refused) > 0 {
		return s, nil, fmt.Errorf("a resume keeps what the run measures, so these cannot change: %s; drop them to resume as started, or start a new run",
			strings.Join(refused, "; "))
	}
	return out, notes, nil
}

func costText(c float64) string {
	if c <= 0 {
		return "no cap"
	}
	return fmt.Sprintf("$%g", c)
}

// fixed compares the settings a resume may not change; it returns what
// differs ("" when nothing does).
func (s Settings) fixedDiff(o Settings) string {
	var d []string
	if s.Model != o.Model {
		d = append(d, fmt.Sprintf("model %q, now %q", s.Model, o.Model))
	}
	if s.Repeat != o.Repeat {
		d = append(d, fmt.Sprintf("repeat %d, now %d", s.Repeat, o.Repeat))
	}
	if s.Fresh != o.Fresh {
		d = append(d, fmt.Sprintf("fresh %v, now %v", s.Fresh, o.Fresh))
	}
	if s.Offline != o.Offline {
		d = append(d, fmt.Sprintf("offline %v, now %v", s.Offline, o.Offline))
	}
	if s.IDField != o.IDField || s.StateField != o.StateField || s.StateFields != o.StateFields || !slices.Equal(s.Labels, o.Labels) {
		d = append(d, "the dataset field mapping")
	}
	return strings.Join(d, "; ")
}

func (s Settings) isZero() bool {
	return s.Set == "" && s.Data == "" && s.IDField == "" && s.StateField == "" && s.StateFields == "" && len(s.Labels) == 0 && s.Model == "" &&
		len(s.Fixtures) == 0 && s.Record == "" && len(s.AllowPaths) == 0 && s.ImportedFrom == "" && s.Source == "" && !s.Fresh && !s.Offline && s.RPS == 0 && s.Timeout == 0 && s.Repeat == 0 && s.Concurrency == 0 && s.MaxCostUSD == 0 &&
		s.Probe == "" && s.BaseRun == "" && s.ProbeSeed == 0 && len(s.ProbeParams) == 0
}
