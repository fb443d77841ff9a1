#!/usr/bin/env bash
# tmux smoke test of the session TUI.
#
# Drives the real app (typer entry point, real terminal driver, by default the embedded
# local:smollm2 model) in a detached 120x40 tmux pane through one human-feedback turn, then
# checks the database.
# It covers what Pilot cannot: the entry point, the terminal driver, startup time, a clean exit.
#
# Usage: scripts/tui_smoke.sh [--task ID] [--model SPEC] [--out DIR]
#   --task ID     task to play (default BigCodeBench/2)
#   --model SPEC  the app's --model (default: its own, local:smollm2); the test suite passes
#                 mock:FILE so that turn 0 fails its tests on every machine
#   --out DIR     where s.db, screen-1.txt, screen-2.txt and exit.txt go (default: a mktemp dir)
# Environment:
#   CONVTUI       command that runs convtui (default "convtui"); word-split by the shell, so
#                 "/path/to/python -m convtui" works
#   PYTHON        interpreter for the database check (default python, else python3)
#   DEADLINE_S    seconds allowed for each wait (default 180)
#   CONVTUI_DATA_DIR and the rest of the environment reach the app unchanged (the tmux server
#   is private to this run, so it inherits this environment).
#
# Waits poll the pane every 0.2 s against a deadline; nothing synchronises on a bare sleep.
set -euo pipefail

TASK="BigCodeBench/2"
MODEL=""
OUT=""
CONVTUI="${CONVTUI:-convtui}"
DEADLINE_S="${DEADLINE_S:-180}"
FEEDBACK="Unpack the items correctly, then sort the letters by the mean of their lists."

die() {
    printf 'tui_smoke: FAIL: %s\n' "$*" >&2
    exit 1
}

usage() {
    sed -n '/^# Usage:/,/^# Waits/{/^# Waits/d; s/^# \{0,1\}//p;}' "$0"
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --task) [[ $# -ge 2 ]] || die "--task needs a value"; TASK="$2"; shift 2 ;;
        --task=*) TASK="${1#*=}"; shift ;;
        --model) [[ $# -ge 2 ]] || die "--model needs a value"; MODEL="$2"; shift 2 ;;
        --model=*) MODEL="${1#*=}"; shift ;;
        --out) [[ $# -ge 2 ]] || die "--out needs a value"; OUT="$2"; shift 2 ;;
        --out=*) OUT="${1#*=}"; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done

[[ "$DEADLINE_S" =~ ^[1-9][0-9]*$ ]] || die "DEADLINE_S must be a positive integer, got '$DEADLINE_S'"
command -v tmux >/dev/null || die "tmux is not installed"
PYTHON="${PYTHON:-}"
if [[ -z "$PYTHON" ]]; then
    if command -v python >/dev/null; then PYTHON=python; else PYTHON=python3; fi
fi

if [[ -z "$OUT" ]]; then
    OUT="$(mktemp -d "${TMPDIR:-/tmp}/convtui-smoke.XXXXXX")"
else
    mkdir -p "$OUT"
fi
OUT="$(cd "$OUT" && pwd)"
# Only the files this script owns: a stale s.db would hold a second session.
rm -f "$OUT/s.db" "$OUT/s.db-wal" "$OUT/s.db-shm" "$OUT/exit.txt" \
    "$OUT/screen-1.txt" "$OUT/screen-2.txt" "$OUT/tmux.conf"

NAME="convtui-smoke-$$"
# A private server (-L): it inherits this environment even when another tmux server runs, its
# config is ours (no status bar, so the pane is the full 120x40; the pane stays after the app
# exits so a crash's output can still be captured), and cleanup touches nothing else.
cat >"$OUT/tmux.conf" <<'CONF'
set -g status off
set -g remain-on-exit on
set -g history-limit 2000
CONF
TMUX_CMD=(tmux -u -L "$NAME" -f "$OUT/tmux.conf")

SOCKET=""
cleanup() {
    "${TMUX_CMD[@]}" kill-server >/dev/null 2>&1 || true
    # tmux leaves its socket file behind; remove ours (and only ours).
    if [[ -n "$SOCKET" && -S "$SOCKET" && "${SOCKET##*/}" == "$NAME" ]]; then
        rm -f "$SOCKET"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now() {
    local t="${EPOCHREALTIME:-}"
    [[ -n "$t" ]] || t="$(date +%s.%N)"
    printf '%s' "${t/,/.}"
}

elapsed() { # elapsed START -> seconds since START, two decimals
    awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'
}

capture() {
    "${TMUX_CMD[@]}" capture-pane -p -t "$NAME" 2>/dev/null
}

show_pane() {
    printf -- '--- pane (%s) ---\n' "$1" >&2
    capture >&2 || printf '(no pane to capture: the tmux session is gone)\n' >&2
    if [[ -f "$OUT/exit.txt" ]]; then
        printf -- '--- %s: %s\n' "$OUT/exit.txt" "$(cat "$OUT/exit.txt")" >&2
    fi
    printf -- '--- end of pane ---\n' >&2
}

ere_escape() { # a literal string as an extended regex
    printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'
}

# Phases that mean the turn will not get where we are waiting: fail at once, not at the deadline.
FAIL_RE='turn failed: |turn cancelled: |stalled: nothing left'

# wait_for DESCRIPTION ERE [ERE...]: poll the pane until every extended regex matches it.
wait_for() {
    local what="$1"
    shift
    local deadline=$((SECONDS + DEADLINE_S)) pane pattern ok
    while :; do
        pane="$(capture)" || pane=""
        ok=1
        for pattern in "$@"; do
            grep -Eq -- "$pattern" <<<"$pane" || { ok=0; break; }
        done
        if ((ok)); then
            LAST_PANE="$pane"
            return 0
        fi
        if grep -Eq -- "$FAIL_RE" <<<"$pane"; then
            show_pane "the turn failed while waiting for: $what"
            die "the app reports a failed turn while waiting for: $what"
        fi
        if [[ -f "$OUT/exit.txt" ]]; then
            show_pane "the app exited while waiting for: $what"
            die "the app exited ($(cat "$OUT/exit.txt")) while waiting for: $what"
        fi
        if ((SECONDS >= deadline)); then
            show_pane "last capture, after ${DEADLINE_S}s waiting for: $what"
            die "timed out after ${DEADLINE_S}s waiting for: $what"
        fi
        sleep 0.2
    done
}

wait_for_file() { # wait_for_file PATH DESCRIPTION
    local deadline=$((SECONDS + DEADLINE_S))
    until [[ -s "$1" ]]; do
        if ((SECONDS >= deadline)); then
            show_pane "last capture, after ${DEADLINE_S}s waiting for: $2"
            die "timed out after ${DEADLINE_S}s waiting for: $2"
        fi
        sleep 0.2
    done
}

# --- launch ---------------------------------------------------------------------------------
# CONVTUI is deliberately unquoted in the pane's command line: it may be "python -m convtui".
app_cmd="$CONVTUI session --task $(printf '%q' "$TASK") --db $(printf '%q' "$OUT/s.db")"
app_cmd+=" --turns 3 --max-tokens 96 -j 1"
if [[ -n "$MODEL" ]]; then
    app_cmd+=" --model $(printf '%q' "$MODEL")"
fi
pane_cmd="$app_cmd; echo \"exit=\$?\" > $(printf '%q' "$OUT/exit.txt")"

echo "tui_smoke: task $TASK, output in $OUT"
echo "tui_smoke: running: $app_cmd"
start="$(now)"
"${TMUX_CMD[@]}" new-session -d -x 120 -y 40 -s "$NAME" -c "$PWD" "$pane_cmd"
SOCKET="$("${TMUX_CMD[@]}" display-message -p -t "$NAME" '#{socket_path}' 2>/dev/null || true)"

task_re="$(ere_escape "$TASK")"
# The title is the first row: " BigCodeBench/2 · local:smollm2 · …" (or the --model given).
wait_for "the title line to show $TASK" "^ *${task_re} "
t_title="$(elapsed "$start")"
wait_for "turn 0 to wait for feedback" "waiting for your feedback" "T0 [^ ]+ [0-9]+/[0-9]+"
t_feedback="$(elapsed "$start")"
echo "tui_smoke: startup: title after ${t_title}s, 'waiting for your feedback' after ${t_feedback}s"
printf '%s\n' "$LAST_PANE" >"$OUT/screen-1.txt"

# --- one human-feedback turn ----------------------------------------------------------------
"${TMUX_CMD[@]}" send-keys -t "$NAME" -l "$FEEDBACK"
wait_for "the typed feedback to show in the composer" "$(ere_escape "$FEEDBACK")"
"${TMUX_CMD[@]}" send-keys -t "$NAME" C-j
wait_for "turn 0 to be saved as human feedback" "T0 [^ ]+ [0-9]+/[0-9]+ · human"
wait_for "turn 1 to finish its tests and wait (or end the session)" \
    "T0 [^ ]+ [0-9]+/[0-9]+ · human" \
    "T1 [^ ]+ [0-9]+/[0-9]+" \
    "waiting for your feedback|turn limit reached|solved"
printf '%s\n' "$LAST_PANE" >"$OUT/screen-2.txt"

# --- quit -----------------------------------------------------------------------------------
"${TMUX_CMD[@]}" send-keys -t "$NAME" C-q
wait_for_file "$OUT/exit.txt" "the app to exit after ctrl+q"
exit_line="$(cat "$OUT/exit.txt")"
if [[ "$exit_line" != "exit=0" ]]; then
    show_pane "after ctrl+q"
    die "the app did not exit cleanly: $exit_line"
fi

# --- the database ---------------------------------------------------------------------------
summary="$("$PYTHON" - "$OUT/s.db" "$FEEDBACK" "$TASK" <<'PY'
import sqlite3
import sys

path, feedback, task = sys.argv[1:4]
problems = []
db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
db.row_factory = sqlite3.Row
sessions = db.execute("SELECT * FROM sessions").fetchall()
if len(sessions) != 1:
    sys.exit(f"expected exactly one session in {path}, found {len(sessions)}")
s = sessions[0]
if s["task_id"] != task:
    problems.append(f"session task_id is {s['task_id']!r}, expected {task!r}")
if s["turns_done"] < 1:
    problems.append(f"session turns_done is {s['turns_done']}, expected >= 1")
t0 = db.execute("SELECT * FROM turns WHERE session_id = ? AND idx = 0", (s["id"],)).fetchone()
if t0 is None:
    sys.exit(f"session {s['id']} has no turn 0")
if t0["verbal_feedback"] != feedback:
    problems.append(f"turn 0 verbal_feedback is {t0['verbal_feedback']!r}, expected {feedback!r}")
if t0["feedback_source"] != "human":
    problems.append(f"turn 0 feedback_source is {t0['feedback_source']!r}, expected 'human'")
execution = None
if t0["execution_id"] is None:
    problems.append("turn 0 links no execution")
else:
    execution = db.execute(
        "SELECT * FROM executions WHERE id = ?", (t0["execution_id"],)
    ).fetchone()
    if execution is None:
        problems.append(f"turn 0 links execution {t0['execution_id']}, which does not exist")
calls = db.execute(
    "SELECT id FROM model_calls WHERE session_id = ? AND turn_idx = 0 "
    "AND purpose = 'generate' AND status = 'ok'",
    (s["id"],),
).fetchall()
if not calls:
    problems.append("model_calls has no ok 'generate' call for turn 0")
if problems:
    sys.exit("database check failed:\n  " + "\n  ".join(problems))
tests = f"{execution['status']} {execution['tests_passed']}/{execution['tests_total']}"
print(
    f"session {s['id']} ({s['status']}), turns_done={s['turns_done']}, "
    f"T0 execution #{t0['execution_id']} {tests}, feedback_source=human, "
    f"{len(calls)} ok generate call(s) for T0"
)
PY
)" || die "database check on $OUT/s.db (see above)"

echo "tui_smoke: OK: $summary; startup ${t_title}s to title, ${t_feedback}s to first feedback prompt"
echo "--- screen-1.txt (turn 0 waiting for feedback) ---"
cat "$OUT/screen-1.txt"
echo "--- screen-2.txt (feedback saved, turn 1 done) ---"
cat "$OUT/screen-2.txt"
