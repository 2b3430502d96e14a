// Package pkg is a fixture whose doc comment's code has drifted:
//
//	greeting := "hi"
//	fmt.Println("done")
package pkg
