package exclusive

// DefaultLookahead is how many available jobs, at most, one fetch looks at to
// find jobs it may start, when the engine does not say otherwise.
//
// A fetch reads available jobs in River's order and skips those whose key is
// held by a running job, or taken by an earlier job in the same fetch. In the
// common case the first few rows give it all it needs; the bound only matters
// when the head of a queue is one long run of jobs of held keys (say one
// process instance with thousands of waiting exclusive jobs). Jobs further
// back than the lookahead then wait until the head drains, instead of every
// fetch of every client paying for a scan of the whole backlog.
const DefaultLookahead = 10_000

// MaxWindow caps one page of a fetch, so that the per-page ranking stays a
// small in-memory sort.
const MaxWindow = 4096

// Window returns how many available jobs the next page of a fetch looks at.
// want is how many jobs the fetch still wants, page counts the pages already
// read (0 for the first), and left is what remains of the lookahead.
//
// The first page reads 2*want+16 rows: enough when the head of the queue is
// mostly distinct free keys, and cheap (River itself reads want rows). Each
// further page is four times larger, so a long run of held keys is crossed in
// a few statements. It returns 0 when nothing is left to read.
func Window(want, page, left int) int {
	if want <= 0 || left <= 0 {
		return 0
	}
	size := 2*want + 16
	for i := 0; i < page && size < MaxWindow; i++ {
		size *= 4
	}
	return min(size, MaxWindow, left)
}
