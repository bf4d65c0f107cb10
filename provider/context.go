package provider

import "context"

// freshKey marks a context whose calls must bypass any answer cache.
type freshKey struct{}

// WithFresh returns ctx marked so that a caching Provider skips reading its
// cache for calls made under it (it still records what it gets). The batch
// runner uses it for every repeat after the first, so --repeat measures a
// question's own noise rather than replaying one answer.
func WithFresh(ctx context.Context) context.Context {
	return context.WithValue(ctx, freshKey{}, true)
}

// IsFresh reports whether ctx was marked by WithFresh.
func IsFresh(ctx context.Context) bool {
	v, _ := ctx.Value(freshKey{}).(bool)
	return v
}
