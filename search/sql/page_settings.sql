-- PageSettings: the settings a listing's page runs with, for its
-- transaction only: a page reads at most a few thousand index entries, for
-- which starting parallel workers or compiling the plan (JIT) costs more
-- than the whole scan (a second, on a busy machine, against milliseconds).
SELECT
    set_config('max_parallel_workers_per_gather', '0', true),
    set_config('jit', 'off', true);
