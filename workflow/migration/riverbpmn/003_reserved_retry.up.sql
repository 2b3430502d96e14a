-- riverbpmn migration line "riverbpmn", version 3: reserved for the retry
-- cycle work (issue 3), which ships the real 003. This placeholder only keeps
-- the line contiguous (rivermigrate refuses gaps) on the exclusive-jobs
-- branch; delete both 003_reserved_retry files when merging issue 3.
SELECT 1;
