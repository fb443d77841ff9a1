"""Reading recorded sessions back: the list, one session in full and ids from a prefix
(browse.py, ``sessions list|show``), one outcome per session for reports (results.py), the
log sets a static replay plays against (log_sets.py), and a session as plain JSON values
(transcript.py). Reading only: nothing here writes.

May import: core/ and sessions/database; exchange/ and studies/ build on it."""
