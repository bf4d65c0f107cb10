package headless

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
)

// Downscale averages each f × f block of img into one pixel (a box
// filter), which keeps layout and colour and drops the sub-pixel noise of
// font rasterisation that would make a golden comparison brittle.
func Downscale(img image.Image, f int) *image.RGBA {
	b := img.Bounds()
	w, h := b.Dx()/f, b.Dy()/f
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	n := uint32(f * f)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var r, g, bl uint32
			for dy := 0; dy < f; dy++ {
				for dx := 0; dx < f; dx++ {
					cr, cg, cb, _ := img.At(b.Min.X+x*f+dx, b.Min.Y+y*f+dy).RGBA()
					r, g, bl = r+cr>>8, g+cg>>8, bl+cb>>8
				}
			}
			out.SetRGBA(x, y, color.RGBA{uint8(r / n), uint8(g / n), uint8(bl / n), 255})
		}
	}
	return out
}

// Diff compares two images of the same size pixel by pixel and returns the
// share of pixels whose largest channel difference exceeds tol (0–255).
func Diff(a, b image.Image, tol int) (float64, error) {
	ab, bb := a.Bounds(), b.Bounds()
	if ab.Dx() != bb.Dx() || ab.Dy() != bb.Dy() {
		return 1, fmt.Errorf("sizes differ: %dx%d and %dx%d", ab.Dx(), ab.Dy(), bb.Dx(), bb.Dy())
	}
	bad := 0
	for y := 0; y < ab.Dy(); y++ {
		for x := 0; x < ab.Dx(); x++ {
			r1, g1, b1, _ := a.At(ab.Min.X+x, ab.Min.Y+y).RGBA()
			r2, g2, b2, _ := b.At(bb.Min.X+x, bb.Min.Y+y).RGBA()
			d := max(absDiff(r1>>8, r2>>8), absDiff(g1>>8, g2>>8), absDiff(b1>>8, b2>>8))
			if d > tol {
				bad++
			}
		}
	}
	return float64(bad) / float64(ab.Dx()*ab.Dy()), nil
}

func absDiff(a, b uint32) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// ReadPNG decodes the PNG file at path.
func ReadPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

// WritePNG encodes img to path.
func WritePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
