"""Running candidates: the executor and its sandboxed children, Ray, requests, verdicts."""
