package pkg_test

import "fmt"

type Args struct{ ID string }

func (Args) Kind() string { return "args" }

func ExampleHello() {
	greeting := "hello"
	for i := 0; i < 2; i++ {
		fmt.Println(greeting, i)
	}
	fmt.Println("done")
	// Output:
	// hello 0
	// hello 1
	// done
}

func TestSomething(t *testing.T) {}
