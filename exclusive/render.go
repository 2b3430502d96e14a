package exclusive

import (
	"regexp"
	"strings"

	"github.com/riverbpmn/riverbpmn/internal/sqltemplate"
)

var (
	keyExpressionSQL = map[Scope]string{
		ProcessInstance:     mustReadSQL("exclusive_key_process_instance.sql"),
		RootProcessInstance: mustReadSQL("exclusive_key_root_process_instance.sql"),
	}
	keyJSONBExpressionSQL = map[Scope]string{
		ProcessInstance:     mustReadSQL("exclusive_key_jsonb_process_instance.sql"),
		RootProcessInstance: mustReadSQL("exclusive_key_jsonb_root_process_instance.sql"),
	}
	keyGuardSQL = map[Scope]string{
		ProcessInstance:     mustReadSQL("exclusive_key_guard_process_instance.sql"),
		RootProcessInstance: mustReadSQL("exclusive_key_guard_root_process_instance.sql"),
	}
	keySQL        = mustReadSQL("exclusive_key.sql")
	lockIsLiveSQL = mustReadSQL("lock_is_live.sql")
	waitingSQL    = mustReadSQL("exclusive_waiting.sql")
)

// The markers of exclusive .sql templates, besides the schema marker.
var (
	// "/* EXCLUSIVE_KEY */" and "/* EXCLUSIVE_KEY: alias */": the exclusive
	// key of the river_job row named river_job, or alias (NULL if none).
	exclusiveKeyMarker = regexp.MustCompile(`/\* EXCLUSIVE_KEY(?:: ([a-z_]+))? \*/`)
	// "/* KEY_EXPRESSION: alias */": the scope's key expression of the row
	// alias, as its index has it (for index conditions).
	keyExpressionMarker = regexp.MustCompile(`/\* KEY_EXPRESSION: ([a-z_]+) \*/`)
	// "/* KEY_JSONB_EXPRESSION: alias */": the scope's key expression of the
	// row alias as jsonb, as the priority-order index of migration 010 has
	// it.
	keyJSONBExpressionMarker = regexp.MustCompile(`/\* KEY_JSONB_EXPRESSION: ([a-z_]+) \*/`)
	// "/* KEY_GUARD: alias */": whether the key fields of the row alias are
	// of the types a key needs (strings), as the exclusive key requires.
	keyGuardMarker = regexp.MustCompile(`/\* KEY_GUARD: ([a-z_]+) \*/`)
	// "/* LOCK_IS_LIVE: alias */": whether the lock row alias holds its key.
	lockIsLiveMarker = regexp.MustCompile(`/\* LOCK_IS_LIVE: ([a-z_]+) \*/`)
	// "/* WAITING_FOR: expression */": whether the river_job row waiting is an
	// available, due, exclusive job of the key given by expression.
	waitingForMarker = regexp.MustCompile(`/\* WAITING_FOR: ([a-z_.]+) \*/`)
)

// RenderSQL renders an exclusive .sql template for schema and scope: the
// exclusive markers (the key of a row under scope, the liveness of a lock
// row, ...), then the schema marker and the further marker/value pairs of
// markerValues (sqltemplate.Render). With a scope that enforces nothing
// (None) every key is NULL.
func RenderSQL(tmpl, schema string, scope Scope, markerValues ...string) string {
	keyExpression, keyJSONBExpression, keyGuard := "NULL::text", "NULL::jsonb", "true"
	if scope.Enabled() {
		keyExpression = stripSQLComments(keyExpressionSQL[scope])
		keyJSONBExpression = stripSQLComments(keyJSONBExpressionSQL[scope])
		keyGuard = stripSQLComments(keyGuardSQL[scope])
	}
	forAlias := func(sql, alias string) string { return strings.ReplaceAll(sql, "river_job.", alias+".") }
	key := "(" + strings.NewReplacer("KEY_EXPRESSION", keyExpression, "KEY_GUARD", "("+keyGuard+")").
		Replace(stripSQLComments(keySQL)) + ")"

	rendered := replaceMarker(tmpl, exclusiveKeyMarker, func(alias string) string {
		if alias == "" {
			return key
		}
		return forAlias(key, alias)
	})
	rendered = replaceMarker(rendered, waitingForMarker, func(keyValue string) string {
		return "(" + strings.ReplaceAll(stripSQLComments(waitingSQL), "KEY_VALUE", keyValue) + ")"
	})
	rendered = replaceMarker(rendered, keyExpressionMarker, func(alias string) string {
		return "(" + forAlias(keyExpression, alias) + ")"
	})
	rendered = replaceMarker(rendered, keyJSONBExpressionMarker, func(alias string) string {
		return "(" + forAlias(keyJSONBExpression, alias) + ")"
	})
	rendered = replaceMarker(rendered, keyGuardMarker, func(alias string) string {
		return "(" + forAlias(keyGuard, alias) + ")"
	})
	rendered = replaceMarker(rendered, lockIsLiveMarker, func(alias string) string {
		return strings.ReplaceAll(stripSQLComments(lockIsLiveSQL), "LOCK_ALIAS", alias)
	})
	return sqltemplate.Render(rendered, schema, markerValues...)
}

// replaceMarker replaces every match of marker in sql with replace(its first
// group).
func replaceMarker(sql string, marker *regexp.Regexp, replace func(arg string) string) string {
	return marker.ReplaceAllStringFunc(sql, func(match string) string {
		return replace(marker.FindStringSubmatch(match)[1])
	})
}

// stripSQLComments drops whole-line "--" comments, so a fragment can be
// inlined anywhere.
func stripSQLComments(sql string) string {
	var lines []string
	for line := range strings.SplitSeq(sql, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			lines = append(lines, line)
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
