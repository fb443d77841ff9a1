"""Human-feedback studies: the spec, assignments, agreement and outcomes."""
