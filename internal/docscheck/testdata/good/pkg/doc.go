// Package pkg is a fixture. Its doc comment's code mirrors example_test.go:
//
//	greeting := "hello"
//	// ...
//	fmt.Println("done")
//
// Prose again.
package pkg
