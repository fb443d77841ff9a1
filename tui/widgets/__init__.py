"""The session screen's widgets, one per file; each is fed view models by its screen."""
