package retrypolicy

// UnboundedKeptErrors is unboundedKeptErrors, for the external tests.
const UnboundedKeptErrors = unboundedKeptErrors
