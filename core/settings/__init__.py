"""A session's settings: its config, Ω, the two protocols and the one builder of them."""
