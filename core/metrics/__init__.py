"""Scores over sessions: Pass@1 per turn, MRR, Recall, and rank correlation."""
