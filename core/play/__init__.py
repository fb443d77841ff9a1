"""Playing turns: the session loop, its turn policies, replays, journaled model calls. The
turns it plays and the journals it writes through are core/turns."""
