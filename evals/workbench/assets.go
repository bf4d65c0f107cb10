package workbench

import (
	"encoding/json"
	"fmt"

	"github.com/jevlab/jevlab/evals/questionset"
	"github.com/jevlab/jevlab/internal/inputfile"
	"github.com/jevlab/jevlab/provider"
)

// RequestOptions add what a request carries beyond the set's questions and
// state: Jev 1.14's images and the Danger-Zone opt-ins.
type RequestOptions struct {
	// Assets are the images sent with the request (LoadAssets).
	Assets []provider.Asset
	// DangerZone are the command line's opt-ins (--images, --long-context),
	// added to the set's own.
	DangerZone provider.DangerZone
	// Variants are asked beside their questions (RequestWith).
	Variants []VariantRef
}

// RequestFor is Request with opt: the set's images and opt-ins, and the
// command line's, validated together (sizes and references included)
// before anything is sent.
func RequestFor(set *questionset.Set, state json.RawMessage, model string, opt RequestOptions) (*provider.Request, error) {
	req := set.RequestWith(state, opt.Variants)
	if model != "" {
		req.Model = model
	}
	if req.Model == "" {
		req.Model = provider.DefaultModel
	}
	if len(req.State) == 0 {
		return nil, fmt.Errorf("no state to ask: the set has no working state (state:)")
	}
	if len(set.Assets) > 0 && len(opt.Assets) == 0 {
		// Asked without them, the references would be plain text: never
		// send a request that silently leaves its images out.
		return nil, fmt.Errorf("the set names image assets (assets:) that were not loaded; ask it with 'jevlab ask FILE --images'")
	}
	req.Assets = opt.Assets
	req.DangerZone.Images = req.DangerZone.Images || opt.DangerZone.Images
	req.DangerZone.LongContext = req.DangerZone.LongContext || opt.DangerZone.LongContext
	if err := req.Validate(); err != nil {
		return nil, err
	}
	body, err := req.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	var sent provider.Request
	if err := json.Unmarshal(body, &sent); err != nil {
		return nil, fmt.Errorf("copy request: %w", err)
	}
	sent.DangerZone = req.DangerZone // headers, not body
	return &sent, nil
}

// LoadAssets reads the set's image files (assets:), each resolved inside
// the set's folder or an allowed root (--allow-path), a regular file of at
// most provider.MaxImageBytes: encoded when the request is built, checked
// (format, size, references) before it is sent.
func LoadAssets(set *questionset.Set, allow []string) ([]provider.Asset, error) {
	paths, err := set.AssetPaths(allow)
	if err != nil {
		return nil, err
	}
	out := make([]provider.Asset, 0, len(paths))
	for i, np := range paths {
		name := set.Assets[i].Name
		data, err := inputfile.ReadFile(np.Path, "image asset "+name, provider.MaxImageBytes, "")
		if err != nil {
			return nil, fmt.Errorf("assets.%s: %w (an image may be at most 16 MiB)", name, err)
		}
		out = append(out, provider.NewAsset(name, data))
	}
	return out, nil
}
