"""What a session's turns leave behind, below everything that plays or reads them: the turn
record (:mod:`record`: ``Turn``, ``TurnFeedback``) and the journals the turn loop writes
through (:mod:`journal`: ``CallJournal``, ``ExecutionCache``, a model request's hash).

The loop (core/play/loop.py) is pure library code: it never touches SQLite. It reports every
model call and execution through the small protocols in journal.py, which the store implements
(sessions/database/journal.py, executions.py); that is how a resumed run finds a finished
model call again instead of paying for it twice.

May import: core/execution and core/models (the results and completions a turn holds), nothing
else of core/; core/feedback, core/play, core/ccw, core/codeif and core/studies import it."""
