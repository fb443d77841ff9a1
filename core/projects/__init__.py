"""DevEval's projects, which CodeIF-Bench's repository tasks run inside: where they live,
getting them, checking that they are intact, and what a run writes over its copy."""
