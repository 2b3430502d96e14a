package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/riverbpmn/riverbpmn/workflow"
)

// pageFlags are a listing verb's --after and --limit: with either, the verb
// lists one page through the engine's paged listing (keyset, as the web
// console pages), otherwise everything up to the listing's cap.
type pageFlags struct {
	after  string
	limit  int
	cursor string // what --after names, such as "job id"
}

// register adds --after and --limit to fs; cursor says what --after names.
func (p *pageFlags) register(fs *flag.FlagSet, cursor string) {
	p.cursor = cursor
	fs.StringVar(&p.after, "after", "", "list one page, after this "+cursor+" (the last one of the previous page)")
	fs.IntVar(&p.limit, "limit", 0, fmt.Sprintf("list one page of at most this many (1 to %d; %d with --after alone)", workflow.MaxPageSize, defaultPageLimit))
}

// defaultPageLimit is the page size of --after without --limit.
const defaultPageLimit = 50

// paged says whether one page was asked for.
func (p *pageFlags) paged() bool { return p.after != "" || p.limit != 0 }

// size returns the page size, or an error naming a bad --limit.
func (p *pageFlags) size() (int, error) {
	if p.limit == 0 {
		return defaultPageLimit, nil
	}
	if err := checkLimit(p.limit); err != nil {
		return 0, err
	}
	return p.limit, nil
}

// checkLimit says whether --limit is a page size the engine's paged
// listings take.
func checkLimit(limit int) error {
	if limit < 1 || limit > workflow.MaxPageSize {
		return fmt.Errorf("--limit %d is out of range: 1 to %d", limit, workflow.MaxPageSize)
	}
	return nil
}

// afterID returns --after as an id (0 when not given), or an error naming
// it.
func (p *pageFlags) afterID() (int64, error) {
	if p.after == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(p.after, 10, 64)
	if err != nil || id < 0 {
		return 0, fmt.Errorf("--after %q is not a %s (a non-negative integer)", p.after, p.cursor)
	}
	return id, nil
}

// sizeAndAfterID returns the page size and --after as an id, for a listing
// keyed by id.
func (p *pageFlags) sizeAndAfterID() (int, int64, error) {
	size, err := p.size()
	if err != nil {
		return 0, 0, err
	}
	after, err := p.afterID()
	return size, after, err
}

// printNext ends a text page: when the page is full, the flag that lists
// the next one (last is the cursor of the page's last row).
func (p *pageFlags) printNext(w io.Writer, rows, size int, last string) {
	if p.paged() && rows == size {
		fmt.Fprintf(w, "next page: --after %s --limit %d\n", last, size)
	}
}
