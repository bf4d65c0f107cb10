#!/usr/bin/env bash
# tui-smoke.sh BIN — drive the built workbench in a real terminal (tmux) at
# 80×24 and assert on what the screen shows. Part 1 (demo-triage): open an
# answer, edit an option, run, save, the other screens, quit. Part 2 (the
# shipped Banking77 example, as `make run` opens it): edit → offline miss →
# start the stand-in with one key → run → save (the folder asked) → quit
# (it says how to reopen) → reopen the saved copy. Exits non-zero with the
# screen dump on failure; always removes its tmux session and temporary
# files.
set -euo pipefail

BIN=${1:?usage: tui-smoke.sh BIN}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
command -v tmux >/dev/null || { echo "tui-smoke: tmux not installed" >&2; exit 2; }

TMP=$(mktemp -d)
SESSION="jevlab-smoke-$$"
SOCK="$TMP/tmux.sock"
T() { tmux -S "$SOCK" "$@"; }
cleanup() {
	T kill-server >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT

mkdir -p "$TMP/home" "$TMP/data" "$TMP/work"
cp "$ROOT"/fixtures/demo-triage/* "$TMP/work/"
SET="$TMP/work/questions.yaml"

screen() { T capture-pane -p -t "$SESSION"; }
fail() {
	echo "tui-smoke: FAIL: $*" >&2
	echo "----- screen -----" >&2
	screen >&2 || true
	echo "------------------" >&2
	exit 1
}
# expect TEXT [SECONDS]: wait until the screen shows TEXT.
expect() {
	local text=$1 secs=${2:-10} i
	for ((i = 0; i < secs * 10; i++)); do
		if screen | grep -qF -- "$text"; then
			return 0
		fi
		sleep 0.1
	done
	fail "screen never showed: $text"
}
keys() { T send-keys -t "$SESSION" "$@"; }

T -f /dev/null new-session -d -s "$SESSION" -x 80 -y 24 \
	"cd '$TMP/work' && env HOME='$TMP/home' XDG_DATA_HOME='$TMP/data' TYPESAFE_API_KEY= NO_COLOR=1 TERM=xterm-256color '$BIN' --offline '$SET'; echo \"EXITED \$?\"; sleep 30"

# The first frame, then the recorded answers for the working state.
expect "demo-triage"
expect "offline"
expect "3 answered"

# Open an answer: focus the chart pane of the first question (a noul gauge).
keys Tab
expect "▌Answer"
expect "P(true)"
keys Escape
expect "▌Questions"

# Edit an option: the queue question's "unknown" option (no dataset label
# uses it, so the dataset still lints), renamed.
keys Down
expect "queue"
keys e
expect "Edit queue"
keys Down Down Down Down Down
keys n
keys C-u
keys -l "unclear"
keys Enter
expect "unclear:"
expect "● unsaved"

# Run: the edited question has no recording offline, the others still answer.
keys r
expect "have no recorded answer"
expect "No recorded answer for queue"

# Save: the file on disk has the edit and the marker goes away.
keys C-s
expect "saved questions.yaml"
grep -q "unclear:" "$SET" || fail "saved file lacks the renamed option"
if screen | grep -qF "● unsaved"; then fail "still marked unsaved after saving"; fi

# The other screens: the dataset, an evaluation (the edited question has
# no recordings offline, so its answers fail and are counted), the runs.
keys Escape
expect "▌Questions"
keys 2
expect "Items 10 of 10"
keys 3
expect "r evaluates the working set over 10 items"
keys r
expect "Metrics · run" 20
expect "10/10 items"
keys 4
expect "Runs 1 of 1"

# Quit. (A pause after Escape, or the terminal reads Escape q as alt+q.)
keys 1
expect "▌Questions"
keys q
expect "EXITED 0"
if "$BIN" --help 2>/dev/null | grep -qE "^  lint( |$)"; then
	"$BIN" lint "$SET" >/dev/null 2>&1 || { "$BIN" lint "$SET" >&2 || true; fail "jevlab lint rejects the saved file"; }
fi

# Part 2: the shipped example, as `make run` opens it (no key, offline).
T kill-session -t "$SESSION" >/dev/null 2>&1 || true
mkdir -p "$TMP/work2"
T -f /dev/null new-session -d -s "$SESSION" -x 80 -y 24 \
	"cd '$TMP/work2' && env HOME='$TMP/home' XDG_DATA_HOME='$TMP/data' TYPESAFE_API_KEY= NO_COLOR=1 TERM=xterm-256color '$BIN'; echo \"EXITED \$?\"; sleep 30"
expect "banking77"
expect "1 answered"

# Edit the question's instructions: a new question, never recorded.
keys e
expect "Edit intent"
keys Down Enter
expect "editing as text"
keys End
keys -l " Answer with the closest intent."
keys Escape
expect "● unsaved"
keys Escape
expect "▌Questions"

# Run: offline, a miss. The note says what to do, in full, and names S.
keys r
expect "No recorded answer for intent"
expect "Press S to start"
keys S
expect "stand-in │"
expect "standin-synthetic-1"
expect "1 answered"

# Save: the folder is asked (default ./banking77/), then how to reopen it.
keys C-s
expect "Save the example"
expect "./banking77/"
keys Enter
expect "saved banking77/questions.yaml"
expect "Reopen it with"
[ -f "$TMP/work2/banking77/questions.yaml" ] || fail "no saved copy in ./banking77/"
grep -q "Answer with the closest intent." "$TMP/work2/banking77/questions.yaml" || fail "the saved copy lacks the edit"
[ -f "$TMP/work2/banking77/dataset.jsonl" ] || fail "the saved copy lacks its dataset"

# Quit: it says again how to reopen the copy.
keys q
expect "reopen it with:"
expect "  jevlab banking77/questions.yaml"
expect "EXITED 0"

# Reopen the saved copy, offline: the set as saved, its dataset with it.
T kill-session -t "$SESSION" >/dev/null 2>&1 || true
T -f /dev/null new-session -d -s "$SESSION" -x 80 -y 24 \
	"cd '$TMP/work2' && env HOME='$TMP/home' XDG_DATA_HOME='$TMP/data' TYPESAFE_API_KEY= NO_COLOR=1 TERM=xterm-256color '$BIN' --offline banking77/questions.yaml; echo \"EXITED \$?\"; sleep 30"
expect "banking77"
expect "Questions (1)"
expect "No recorded answer for intent"
keys 2
expect "Items"
keys 1
expect "▌Questions"
keys q
expect "EXITED 0"
echo "tui-smoke: ok (demo-triage: open answer, edit option, run, save, dataset, evaluate, runs, quit; banking77: edit, offline miss, S stand-in, run, save to ./banking77/ (asked), reopen — at 80x24)"
