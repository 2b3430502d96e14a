// Package firstprogram is the README's first program, kept as a runnable
// Example (example_test.go) that the test suite runs and whose code the
// README's snippets must match line for line (make docs-check).
package firstprogram
