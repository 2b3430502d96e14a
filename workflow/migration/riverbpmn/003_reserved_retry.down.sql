-- Placeholder for version 3; see 003_reserved_retry.up.sql.
SELECT 1;
