package workflow

import "sync"

// lazy is a feature handle built at its accessor's first call (after
// NewEngine has validated the configuration), then kept.
type lazy[T any] struct {
	once sync.Once
	v    T
}

// get returns the handle, building it with build at the first call.
func (l *lazy[T]) get(build func() T) T {
	l.once.Do(func() { l.v = build() })
	return l.v
}
