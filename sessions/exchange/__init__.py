"""Files that leave or enter a store, in the references' layouts: JSONL transcripts and
ConvCodeWorld's static logs (export.py, static_logs.py, static_plan.py, ccw_files.py), their
import back (ccw_import.py, ccw_sets.py, ccw_verdicts.py), and CodeIF-Bench's completions
(codeif_export.py): ``sessions export|import`` and ``bench static --logs``.

May import: core/, sessions/database and sessions/reading."""
