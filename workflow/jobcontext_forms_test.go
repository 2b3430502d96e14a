package workflow

import (
	"encoding/json"
	"strconv"
)

// compactJSON encodes jc in the array form of migration riverbpmn/016, which
// this version reads but no longer writes (tests write it to build tables of
// every form): an array of its fields in the order of compactFields, empty
// ones null, trailing nulls left out, the root left out when it is the
// instance itself.
func (jc JobContext) compactJSON() (json.RawMessage, error) {
	jc = jc.stored()
	strs := jc.compactStrings()
	present := func(i int) bool {
		switch i {
		case priorityPosition:
			return jc.Priority != nil
		case exclusivePosition:
			return jc.Exclusive != nil
		}
		return *strs[i] != ""
	}
	n := len(strs)
	for n > 0 && !present(n-1) {
		n--
	}
	buf := make([]byte, 0, 128)
	buf = append(buf, '[')
	for i := range n {
		if i > 0 {
			buf = append(buf, ',')
		}
		switch {
		case !present(i):
			buf = append(buf, "null"...)
		case i == priorityPosition:
			buf = strconv.AppendInt(buf, *jc.Priority, 10)
		case i == exclusivePosition:
			buf = strconv.AppendBool(buf, *jc.Exclusive)
		default:
			var err error
			if buf, err = appendJSONString(buf, *strs[i]); err != nil {
				return nil, err
			}
		}
	}
	return append(buf, ']'), nil
}
