// Package fairness is riverbpmn's tenant fairness: a client that fetches
// fairly across tenants (workflow.Acquisition.FairByTenant) gives every
// tenant with waiting jobs its turn in each fetch, whatever the size of
// another tenant's backlog. This package holds the mechanism: the fair step
// of the fetch query (FetchStepSQL) and the plan part that enables it
// (Part), the weights (Weight, MaxWeight), and where a client is in its
// rounds from one fetch to the next (Turns). The tenant indexes the fair
// step reads are package index's (index.TenantFairness).
//
// Package workflow composes it: a driver whose acquisition is fair adds
// Part to its fetch plan, renders FetchStepSQL into its fetch query, passes
// its Turns (Turns.Arg) at each fetch and advances them from the jobs the
// fetch took (Turns.Advance); the tenant of a job is its job context's
// (workflow.JobContext.TenantID). This package does not import workflow.
//
// # Rounds
//
// A fair fetch works in rounds: in each round every tenant that has jobs
// waiting in the queue gets its weight w in slots (default 1, at most
// MaxWeight), the tenants taking their turns in byte order of their names,
// each tenant's jobs in the client's order (by priority, timers first, due
// date, River's order). Jobs without a tenant are one tenant of their own,
// "". A tenant's slots are numbered across rounds: slot s is in round s / w.
// The fetch reads, for each tenant, its first jobs in the client's order
// from its start slot to the end of the last round it needs, and takes the
// picks by round, then turn, then the client's order.
//
// The round in progress carries from one fetch to the next (Turns), so the
// weights hold whatever the fetch size: a busy pool that fetches one or two
// jobs as slots free up shares them as a fetch of hundreds does, and a
// tenant whose jobs arrive waits at most one round for its first. A tenant
// with nothing the client may take loses its turn in the round (no credit
// builds up while it is idle). A fetch may take fewer jobs than asked when
// the tenants have fewer waiting jobs than their share of it; the next
// fetch takes more.
//
// The turn order is the same on every database: the fetch compares tenants
// with COLLATE "C", which orders as Go's string comparison does, so the
// client's Turns and the statement agree on a database whose default
// collation orders the names otherwise.
//
// Fairness composes with every other acquisition option and with exclusive
// jobs, which still take only a key's head: the fairness only chooses among
// the candidates, and the rounds count the jobs taken, not those passed
// over (a held key).
//
// # Cost
//
// The tenants are found by a skip-scan of the tenant index of the client's
// order, one index probe per tenant however many jobs each has; each
// tenant's jobs are read from the same index in the client's order. The
// indexes are not in a migration: a fair client creates its own order's
// when it starts, so a database whose clients never fetch fairly has none
// and its inserts pay nothing. Turns are kept in memory: no statement, no
// write (Turns says what a restart costs).
package fairness
