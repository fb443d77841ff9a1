"""What a model is told: compilation and execution feedback, the simulated users, prompts."""
