package questionset

import (
	"errors"

	yaml "go.yaml.in/yaml/v3"

	"github.com/jevlab/jevlab/provider"
)

// AssetRef is one entry of a set's `assets:` (Jev 1.14 images): the name
// the state or questions reference as text, and the image file, written
// relative to the set's folder (and contained in it like dataset: and
// fixtures:, unless --allow-path allows another root). The file is read and
// encoded when a request is sent, never when the set is loaded.
type AssetRef struct {
	Name string
	Path string
	at   [2]int
}

// readAssets reads `assets: {name: path, …}`.
func (p *parser) readAssets(s *Set, n *yaml.Node) {
	d := deref(n)
	if d.Kind == yaml.ScalarNode && d.ShortTag() == "!!null" {
		return
	}
	if d.Kind != yaml.MappingNode {
		p.errAt(d, "", "assets", "must be a mapping of asset names to image files, e.g. photo: images/mug.png")
		return
	}
	pairs, err := mappingPairs(d, 1)
	if err != nil {
		p.posErr(err, d, "", "assets")
		return
	}
	for _, kv := range pairs {
		f := "assets." + kv.key
		if kv.key == "" {
			p.errAt(kv.keyNode, "", "assets", "an asset needs a name")
			continue
		}
		path := p.text(kv.value, "", f)
		if path == "" {
			if p.isText(kv.value) {
				p.errAt(kv.value, "", f, "an empty path; name the image file")
			}
			continue
		}
		v := deref(kv.value)
		s.Assets = append(s.Assets, AssetRef{Name: kv.key, Path: path, at: [2]int{v.Line, v.Column}})
	}
}

// readDangerZone reads `danger_zone: {images: true, long_context: true}`:
// the set's own opt-in to Jev's experimental features (the same as
// --images and --long-context).
func (p *parser) readDangerZone(s *Set, n *yaml.Node) {
	d := deref(n)
	if d.Kind != yaml.MappingNode {
		p.errAt(d, "", "danger_zone", "must be a mapping, e.g. {images: true, long_context: true}")
		return
	}
	pairs, err := mappingPairs(d, 1)
	if err != nil {
		p.posErr(err, d, "", "danger_zone")
		return
	}
	for _, kv := range pairs {
		f := "danger_zone." + kv.key
		v := deref(kv.value)
		var on bool
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" || v.Decode(&on) != nil {
			p.errAt(v, "", f, "must be true or false")
			continue
		}
		switch kv.key {
		case "images":
			s.DangerZone.Images = on
		case "long_context":
			s.DangerZone.LongContext = on
		default:
			p.unknown(kv.keyNode, "", kv.key, []string{"images", "long_context"}, "danger_zone has images and long_context")
		}
	}
}

// AssetPaths resolves the set's assets like DatasetPath: within its folder
// or an allowed root (--allow-path); the error lists every entry that
// leaves.
func (s *Set) AssetPaths(allow []string) ([]NamedPath, error) {
	var out []NamedPath
	var errs ErrorList
	for _, a := range s.Assets {
		np, err := s.namedPath("assets", a.Path, a.at, allow)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Field = "assets." + a.Name
				errs = append(errs, e)
				continue
			}
			return nil, err
		}
		out = append(out, np)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// validationDangerZone is the opt-in a set is validated with on load: the
// set's own, with Images assumed (--images may still opt in when it is
// sent), so a set of box questions loads and its other problems show.
func validationDangerZone(s *Set) provider.DangerZone {
	dz := s.DangerZone
	dz.Images = true
	return dz
}
