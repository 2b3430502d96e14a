package workflow

import (
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/riverbpmn/riverbpmn/internal/jobrow"
)

// jobRowColumns lists river_job's columns in the order scanJobRow reads
// them (package jobrow).
var jobRowColumns = jobrow.Columns

// qualifiedJobRowColumns returns jobRowColumns as "table.col, table.col, ...".
func qualifiedJobRowColumns(table string) string { return jobrow.QualifiedColumns(table) }

// scanJobRow decodes one river_job row selected with jobRowColumns, as
// River's driver does (jobrow.Scan).
func scanJobRow(row pgx.Row) (*rivertype.JobRow, error, error) { return jobrow.Scan(row) }

// scanJobRows reads every row of a river_job query selecting jobRowColumns
// (jobrow.ScanRows).
func scanJobRows(rows pgx.Rows) ([]*rivertype.JobRow, map[int64]error, error) {
	return jobrow.ScanRows(rows)
}
