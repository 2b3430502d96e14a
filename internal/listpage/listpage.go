// Package listpage holds what every feature handle's List shares: the page
// size (ListParams.Limit: 0 means DefaultLimit, at most MaxLimit) and the
// opaque cursor (ListParams.After, ListResult.Next), checked on input with
// an error naming the field and the value.
//
// A List fetches Limit+1 rows (Fetch) and passes them to Trim, so that Next
// is empty exactly when there is no further page.
package listpage

import (
	"fmt"
	"strconv"
)

// DefaultLimit is the page size of a List whose ListParams.Limit is 0.
const DefaultLimit = 100

// MaxLimit is the largest ListParams.Limit.
const MaxLimit = 1000

// Limit returns the page size for limit (0: DefaultLimit), or an error
// naming pkg's ListParams.Limit when it is out of range.
func Limit(pkg string, limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultLimit, nil
	case limit < 0 || limit > MaxLimit:
		return 0, fmt.Errorf("%s: ListParams.Limit must be 0 (default %d) to %d, got %d", pkg, DefaultLimit, MaxLimit, limit)
	}
	return limit, nil
}

// Fetch is how many rows a List asks the database for: one more than the
// page holds, which says whether a further page exists.
func Fetch(limit int) int { return limit + 1 }

// Trim cuts items, fetched with Fetch(limit), to the page and returns the
// cursor of the next page, made by cursor from the page's last item; "" when
// items held no more than limit (no further page).
func Trim[T any](items []T, limit int, cursor func(T) string) ([]T, string) {
	if len(items) <= limit {
		return items, ""
	}
	items = items[:limit]
	return items, cursor(items[limit-1])
}

// ID is the cursor of a listing by a positive int64 id.
func ID(id int64) string { return strconv.FormatInt(id, 10) }

// ParseID reads a cursor made by ID ("" is the first page, 0), or returns an
// error naming pkg's ListParams.After and the value.
func ParseID(pkg, after string) (int64, error) {
	if after == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(after, 10, 64)
	if err != nil || id < 0 {
		return 0, fmt.Errorf("%s: ListParams.After %q is not a cursor of this listing (a non-negative id, as ListResult.Next gives)", pkg, after)
	}
	return id, nil
}
