package exclusive

// DefaultLookahead is how many available jobs, at most, one fetch looks at to
// find jobs it may start, when the engine does not say otherwise.
//
// A fetch reads available jobs in River's order and skips those whose key is
// held by a running job, or that are not the first waiting job of their key.
// In the common case the first few rows give it all it needs; the bound only
// matters when the head of a queue is one long run of jobs of held keys (say
// one process instance with thousands of waiting exclusive jobs). Jobs further
// back than the lookahead then wait until the head drains, instead of every
// fetch of every client paying for a scan of the whole backlog. Skipping a
// job costs about a microsecond or two, so the default bounds a fetch to
// milliseconds.
const DefaultLookahead = 5_000
