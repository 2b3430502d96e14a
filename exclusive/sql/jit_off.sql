-- JIT off for the rest of the transaction: for maintenance statements whose
-- cost estimate can pass jit_above_cost on a bloated table, where compiling
-- takes longer than running (see sweepExclusiveLocks).
SET LOCAL jit = off
