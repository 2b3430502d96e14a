package bpmn

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead: any input gives a model or an *Error, never a panic.
func FuzzRead(f *testing.F) {
	paths, err := filepath.Glob("testdata/*/*.xml")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		content, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(content)
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		m, err := Read("fuzz.bpmn", content, Expressions{})
		var be *Error
		switch {
		case err != nil && !errors.As(err, &be):
			t.Fatalf("error %v is not an *Error", err)
		case err == nil && m == nil:
			t.Fatal("no model and no error")
		}
	})
}
