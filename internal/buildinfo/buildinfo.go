// Package buildinfo reports the versions of riverbpmn and of the River
// modules it was built with, as recorded by the Go toolchain.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// ModulePath is riverbpmn's module path.
const ModulePath = "github.com/riverbpmn/riverbpmn"

// Versions are the module versions a binary was built with.
type Versions struct {
	// RiverBPMN is riverbpmn's version: a tag when installed with
	// `go install ...@version`, "(devel)" when built from a checkout.
	RiverBPMN string
	// River is github.com/riverqueue/river's version.
	River string
	// Go is the toolchain version.
	Go string
}

// Read returns the versions recorded in the running binary.
func Read() Versions {
	versions := Versions{RiverBPMN: "(unknown)", River: "(unknown)", Go: "(unknown)"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return versions
	}
	versions.Go = info.GoVersion
	if info.Main.Path == ModulePath {
		versions.RiverBPMN = info.Main.Version
	}
	for _, dep := range info.Deps {
		switch {
		case dep.Path == ModulePath:
			versions.RiverBPMN = dep.Version
		case dep.Path == "github.com/riverqueue/river":
			versions.River = dep.Version
		}
	}
	versions.RiverBPMN = strings.TrimSpace(versions.RiverBPMN)
	return versions
}
