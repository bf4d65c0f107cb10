package provider

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of JPEG assets
	_ "image/png"  // DecodeConfig of PNG assets
	"math"
	"sort"
	"strings"
)

// Box is Jev 1.14's box question: where in an image a target is. It has
// instructions (naming the target and the image) and no criteria; its
// answer is an Edges with a confidence. Box questions and image assets are
// experimental and need the Images Danger-Zone opt-in (DangerZone.Images).
const Box QuestionType = "box"

// Models that answer box questions: jev-latest still answers with 1.13,
// which refuses them ("Invalid request.").
var BoxModels = []string{"jev-1.14.0", "jev-preview"}

// Edges is a box answer: each edge a fraction of the image measured from
// its top-left corner (left/right of the width, top/bottom of the height),
// passed through as returned (never clamped or reordered).
type Edges struct {
	Top    float64 `json:"top"`
	Bottom float64 `json:"bottom"`
	Left   float64 `json:"left"`
	Right  float64 `json:"right"`
}

// Area is the box's area as a fraction of the image (0 when the edges are
// reversed).
func (e Edges) Area() float64 {
	return math.Max(0, e.Bottom-e.Top) * math.Max(0, e.Right-e.Left)
}

// IoU is the intersection over union of two boxes (0 when both are empty).
func IoU(a, b Edges) float64 {
	iw := math.Min(a.Right, b.Right) - math.Max(a.Left, b.Left)
	ih := math.Min(a.Bottom, b.Bottom) - math.Max(a.Top, b.Top)
	inter := math.Max(0, iw) * math.Max(0, ih)
	union := a.Area() + b.Area() - inter
	if union <= 0 {
		return 0
	}
	return inter / union
}

// BoxOf returns a box answer's edges: a.Box, or read from a.Raw (answers
// loaded from storage keep the box only there).
func (a *Answer) BoxOf() (Edges, bool) {
	if a == nil || a.Type != Box {
		return Edges{}, false
	}
	if a.Box != nil {
		return *a.Box, true
	}
	var w struct {
		Box *Edges `json:"box"`
	}
	if json.Unmarshal(a.Raw, &w) != nil || w.Box == nil {
		return Edges{}, false
	}
	return *w.Box, true
}

// checkBox checks a box answer: {"type": "box", "box": {"top", "bottom",
// "left", "right"}, "confidence"?}, every edge and the confidence finite
// and in [0, 1]. A box has no probabilities (any sent stay in Raw).
func checkBox(id string, q *Question, raw json.RawMessage) (Answer, []error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	var w struct {
		Type *string `json:"type"`
		Box  *struct {
			Top, Bottom, Left, Right *float64
		} `json:"box"`
		Confidence *float64 `json:"confidence"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return Answer{}, []error{&FieldError{Field: "answer", Msg: "not a JSON object of the box answer shape: " + err.Error()}}
	}
	a := Answer{ID: id, Type: Box, Raw: raw}
	switch {
	case w.Type == nil:
		bad("type", "missing")
	case QuestionType(*w.Type) != Box:
		bad("type", "is %q but the question is a box", *w.Type)
		return Answer{}, errs
	}
	unit := func(field string, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1 {
			bad(field, "%v is outside [0, 1]", v)
		}
	}
	if w.Box == nil {
		bad("box", `missing; a box answer is {"box": {"top", "bottom", "left", "right"}} (nested, not flat fields)`)
	} else {
		var e Edges
		for _, f := range []struct {
			name string
			v    *float64
			dst  *float64
		}{{"top", w.Box.Top, &e.Top}, {"bottom", w.Box.Bottom, &e.Bottom}, {"left", w.Box.Left, &e.Left}, {"right", w.Box.Right, &e.Right}} {
			if f.v == nil {
				bad("box."+f.name, "missing")
				continue
			}
			unit("box."+f.name, *f.v)
			*f.dst = *f.v
		}
		a.Box = &e
	}
	if w.Confidence != nil {
		unit("confidence", *w.Confidence)
		a.Confidence, a.HasConfidence = *w.Confidence, true
	}
	if len(errs) > 0 {
		return Answer{}, errs
	}
	return a, nil
}

// DangerZone are TypeSafe's experimental opt-ins, each sent as a header
// (TypeSafe-Danger-Zone-Images / -Long-Context: true) only when the user
// opts in. Images turns on assets and box questions (and raises the
// request cap to MaxImageRequestBytes); LongContext lifts the default token
// limits (64k per request, 32k for the state plus the longest question) to
// 262k, at the cost of speed and accuracy.
type DangerZone struct {
	Images      bool `json:"images,omitempty"`
	LongContext bool `json:"long_context,omitempty"`
}

// The Danger-Zone headers.
const (
	HeaderDangerImages      = "TypeSafe-Danger-Zone-Images"
	HeaderDangerLongContext = "TypeSafe-Danger-Zone-Long-Context"
)

// Token limits of a request, without and with the Long-Context opt-in.
const (
	DefaultMaxRequestTokens     = 64_000
	DefaultMaxStateQuestionTok  = 32_000
	LongContextMaxRequestTokens = 262_144
)

// Headers returns the Danger-Zone headers r is sent with: Images only when
// opted in and the request carries an image or a box question (as the
// official ports do), LongContext whenever opted in.
func (r *Request) DangerHeaders() map[string]string {
	h := map[string]string{}
	if r.DangerZone.Images && r.NeedsImages() {
		h[HeaderDangerImages] = "true"
	}
	if r.DangerZone.LongContext {
		h[HeaderDangerLongContext] = "true"
	}
	return h
}

// NeedsImages reports whether r carries an asset or a box question.
func (r *Request) NeedsImages() bool {
	if len(r.Assets) > 0 {
		return true
	}
	for i := range r.Questions {
		if r.Questions[i].Question.Type == Box {
			return true
		}
	}
	return false
}

// Asset is one image of a request's "assets", referenced by Name as text
// in the state, an instruction or a criterion. Data is the image's bytes
// (sent base64-encoded as data_base64); an asset read back from a
// recording carries only its SHA256.
type Asset struct {
	Name   string
	Format string // "png" or "jpeg"
	Data   []byte
	SHA256 string // hex; set from Data by NewAsset
}

// NewAsset returns the asset name → data, with its format detected from
// the bytes (PNG or JPEG magic) and its hash.
func NewAsset(name string, data []byte) Asset {
	s := sha256.Sum256(data)
	return Asset{Name: name, Format: ImageFormat(data), Data: data, SHA256: hex.EncodeToString(s[:])}
}

// ImageFormat names data's format by its magic bytes: "png", "jpeg", or
// "" for anything else.
func ImageFormat(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		return "jpeg"
	}
	return ""
}

// Image limits the API enforces (it refuses, it does not resize).
const (
	MaxImageSide         = 1568
	MinImageSide         = 280 // one port says 256; 280 is the stricter, safe bound
	MinImagePixels       = 280 * 280
	MaxImagePixels       = 1568 * 1568
	MaxImageBytes        = 16 << 20
	MaxImageRequestBytes = 32 << 20
)

// ImageInfo is what validation reads of an image.
type ImageInfo struct {
	Format        string
	Width, Height int
	Animated      bool
}

// InspectImage reads data's format and size without decoding its pixels.
func InspectImage(data []byte) (ImageInfo, error) {
	info := ImageInfo{Format: ImageFormat(data)}
	if info.Format == "" {
		return info, fmt.Errorf("is not a PNG or JPEG image (the API accepts only those; WebP and GIF are refused)")
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return info, fmt.Errorf("is not a readable %s: %v", strings.ToUpper(info.Format), err)
	}
	info.Width, info.Height = cfg.Width, cfg.Height
	info.Animated = info.Format == "png" && pngAnimated(data)
	return info, nil
}

// pngAnimated reports whether a PNG has an acTL chunk (APNG) before its
// image data.
func pngAnimated(data []byte) bool {
	i := 8
	for i+8 <= len(data) {
		n := int(binary.BigEndian.Uint32(data[i:]))
		typ := string(data[i+4 : i+8])
		if typ == "acTL" {
			return true
		}
		if typ == "IDAT" || n < 0 || i+12+n > len(data) {
			return false
		}
		i += 12 + n
	}
	return false
}

// assetProblems checks r's assets against the API's limits and rules:
// PNG/JPEG, not animated, sides and pixel count in range, each at most
// MaxImageBytes, every asset referenced as text outside object keys, names
// unique and non-empty.
func (r *Request) assetProblems(add func(field, msg string)) {
	seen := map[string]bool{}
	for _, a := range r.Assets {
		field := "assets." + a.Name
		if a.Name == "" {
			add("assets", "an asset has an empty name")
			continue
		}
		if seen[a.Name] {
			add(field, "duplicate asset name")
		}
		seen[a.Name] = true
		if a.Data == nil {
			add(field, "has no image data (a recorded asset carries only its hash and cannot be sent)")
			continue
		}
		if len(a.Data) > MaxImageBytes {
			add(field, fmt.Sprintf("is %d bytes; an image may be at most %d (16 MiB)", len(a.Data), MaxImageBytes))
			continue
		}
		info, err := InspectImage(a.Data)
		if err != nil {
			add(field, err.Error())
			continue
		}
		if a.Format != "" && a.Format != info.Format {
			add(field, fmt.Sprintf("is named format %q but its bytes are %s", a.Format, info.Format))
		}
		if info.Animated {
			add(field, "is an animated PNG; the API accepts still images only")
		}
		long, short := max(info.Width, info.Height), min(info.Width, info.Height)
		px := info.Width * info.Height
		switch {
		case long > MaxImageSide:
			add(field, fmt.Sprintf("is %d×%d; the longest side may be at most %d px (resize it: the API refuses, it does not resize)", info.Width, info.Height, MaxImageSide))
		case short < MinImageSide:
			add(field, fmt.Sprintf("is %d×%d; the shortest side must be at least %d px (sources disagree on 256 or 280; 280 is safe)", info.Width, info.Height, MinImageSide))
		case px < MinImagePixels || px > MaxImagePixels:
			add(field, fmt.Sprintf("has %d pixels; the API takes %d to %d", px, MinImagePixels, MaxImagePixels))
		}
		if !r.referencesAsset(a.Name) {
			add(field, fmt.Sprintf("is never referenced: write %q as text in the state, an instruction or a criterion (the API refuses an unreferenced asset)", a.Name))
		}
	}
}

// References reports whether r places the image named name: the name
// occurs as text (a string value, not an object key) in the state or a
// question's instructions or criteria. A run attaches to each item's
// request only the set's images its state references.
func (r *Request) References(name string) bool { return r.referencesAsset(name) }

// referencesAsset reports whether name occurs as text (a string value, not
// an object key) in the state or any question's instructions or criteria.
func (r *Request) referencesAsset(name string) bool {
	if textContains(r.State, name) {
		return true
	}
	for i := range r.Questions {
		q := &r.Questions[i].Question
		if textContains(q.Instructions, name) {
			return true
		}
		for _, o := range q.Options {
			if textContains(o.Description, name) {
				return true
			}
		}
		for _, l := range q.Levels {
			if textContains(l, name) {
				return true
			}
		}
	}
	return false
}

// textContains reports whether some string value in the JSON v (not an
// object key) contains s.
func textContains(v json.RawMessage, s string) bool {
	if len(v) == 0 || !bytes.Contains(v, []byte(s)) && !bytes.Contains(v, []byte(`\u`)) {
		return false
	}
	var x any
	if json.Unmarshal(v, &x) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(x any) bool {
		switch t := x.(type) {
		case string:
			return strings.Contains(t, s)
		case []any:
			for _, e := range t {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			for _, e := range t { // values only: a reference as a key is not a placement
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(x)
}

// appendAssets writes r's assets: with data_base64 for the wire, or with
// only sha256 and size for a recording.
func (r *Request) appendAssets(b *bytes.Buffer, record bool) {
	if len(r.Assets) == 0 {
		return
	}
	b.WriteString(`,"assets":{`)
	for i, a := range r.Assets {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, a.Name)
		b.WriteString(`:{"type":"image","format":`)
		writeJSONString(b, a.Format)
		if record || a.Data == nil {
			b.WriteString(`,"sha256":`)
			writeJSONString(b, a.SHA256)
			fmt.Fprintf(b, `,"bytes":%d}`, len(a.Data))
			continue
		}
		b.WriteString(`,"data_base64":"`)
		enc := base64.NewEncoder(base64.StdEncoding, b)
		_, _ = enc.Write(a.Data)
		_ = enc.Close()
		b.WriteString(`"}`)
	}
	b.WriteByte('}')
}

// assetsSize is the length appendAssets writes for the wire.
func (r *Request) assetsSize() int {
	if len(r.Assets) == 0 {
		return 0
	}
	n := len(`,"assets":{}`)
	for i, a := range r.Assets {
		if i > 0 {
			n++
		}
		n += jsonStringLen(a.Name) + len(`:{"type":"image","format":,"data_base64":""}`) + jsonStringLen(a.Format) + base64.StdEncoding.EncodedLen(len(a.Data))
	}
	return n
}

// ParseAssets reads a request's "assets": data_base64 (decoded) or a
// recording's sha256.
func ParseAssets(v json.RawMessage) ([]Asset, error) { return parseAssets(v) }

func parseAssets(v json.RawMessage) ([]Asset, error) {
	fields, err := objectFields(v)
	if err != nil {
		return nil, &FieldError{Field: "assets", Msg: "must be an object mapping names to images"}
	}
	out := make([]Asset, 0, len(fields))
	for _, f := range fields {
		var w struct {
			Type   string  `json:"type"`
			Format string  `json:"format"`
			Data   *string `json:"data_base64"`
			SHA256 string  `json:"sha256"`
			Part   *string `json:"part"`
		}
		if err := json.Unmarshal(f.Value, &w); err != nil {
			return nil, &FieldError{Field: "assets." + f.Key, Msg: "must be {type: image, format, data_base64}"}
		}
		if w.Type != "" && w.Type != "image" {
			return nil, &FieldError{Field: "assets." + f.Key + ".type", Msg: fmt.Sprintf("%q: only image assets exist", w.Type)}
		}
		if w.Part != nil {
			return nil, &FieldError{Field: "assets." + f.Key + ".part", Msg: "multipart parts are not supported; send data_base64"}
		}
		a := Asset{Name: f.Key, Format: w.Format, SHA256: w.SHA256}
		if w.Data != nil {
			data, err := base64.StdEncoding.DecodeString(*w.Data)
			if err != nil {
				return nil, &FieldError{Field: "assets." + f.Key + ".data_base64", Msg: "is not standard base64 (no data: prefix)"}
			}
			a = NewAsset(f.Key, data)
			a.Format = w.Format
		} else if w.SHA256 == "" {
			return nil, &FieldError{Field: "assets." + f.Key, Msg: "has neither data_base64 nor sha256"}
		}
		out = append(out, a)
	}
	return out, nil
}

// KeyForRequest is KeyFor of question q of req, with req's images mixed
// in: two requests naming the same reference over different images are
// different questions. Without assets it is KeyFor.
func KeyForRequest(req *Request, q *Question) AnswerKey {
	return WithAssets(KeyFor(req.Model, req.State, q), req.Assets)
}

// WithAssets mixes each asset's name, format and SHA-256 into k (k itself
// when there are none).
func WithAssets(k AnswerKey, assets []Asset) AnswerKey {
	if len(assets) == 0 {
		return k
	}
	as := append([]Asset(nil), assets...)
	sort.Slice(as, func(i, j int) bool { return as[i].Name < as[j].Name })
	h := sha256.New()
	h.Write(k[:])
	for _, a := range as {
		h.Write([]byte{0})
		h.Write([]byte(a.Name))
		h.Write([]byte{0})
		h.Write([]byte(a.Format))
		h.Write([]byte{0})
		h.Write([]byte(a.SHA256))
	}
	var out AnswerKey
	h.Sum(out[:0])
	return out
}
