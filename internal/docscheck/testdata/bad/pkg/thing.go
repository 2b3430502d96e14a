package pkg

// Thing is a fixture type.
type Thing struct{ A int }

// Do is a method.
func (t *Thing) Do() {}
