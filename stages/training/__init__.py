"""Training pairs for the verifier, built from public data sets: pure functions, records in -> pairs out."""
