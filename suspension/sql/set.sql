-- SuspensionSet: suspend ($3 true) or activate ($3 false) target ($1 type,
-- $2 id). Returns whether its state changed; a change bumps the epoch that
-- REPEATABLE READ inserters check (migration riverbpmn/007). Runs after
-- lock.sql in the same transaction.
WITH suspended AS (
    INSERT INTO /* TEMPLATE: schema */river_bpmn_suspension (target_type, target_id)
    SELECT $1::text, $2::text
    WHERE $3::boolean
    ON CONFLICT (target_type, target_id) DO NOTHING
    RETURNING 1
), activated AS (
    DELETE FROM /* TEMPLATE: schema */river_bpmn_suspension
    WHERE target_type = $1::text AND target_id = $2::text AND NOT $3::boolean
    RETURNING 1
), changed AS (
    SELECT (SELECT count(*) FROM suspended) + (SELECT count(*) FROM activated) > 0 AS changed
), bumped AS (
    UPDATE /* TEMPLATE: schema */river_bpmn_suspension_epoch
    SET epoch = epoch + 1
    WHERE (SELECT changed FROM changed)
    RETURNING 1
)
SELECT (SELECT changed FROM changed), (SELECT count(*) FROM bumped);
