"""Playing turns: the session loop, its turn policies, replays, journaled model calls."""
