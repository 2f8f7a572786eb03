#!/bin/sh
# A log-triage agent in POSIX sh, run by heartbeat as its step:
#   exec = "sh agent.sh"   (heartbeat.toml)   or   heartbeat tick --exec "sh agent.sh"
#
# Each heartbeat it reads the next BATCH lines of app.log and opens a ticket
# for every ERROR line. It talks to heartbeat only through the environment
# and one file (the JSON-lines protocol of heartbeat --exec):
#   HEARTBEAT_DATA          a JSON file: the data it saved last time (read it)
#   HEARTBEAT_INSTRUCTIONS  recovery text or a human's note ("" when none)
#   HEARTBEAT_ACTIONS       a file to append JSON lines to:
#                             {"tool": ..., "args": {...}, "output": ..., "error": ...}
#                             {"progress": N}      {"data": {...}}
# Anything it prints goes to heartbeat's output, not into the protocol.
set -eu

LOG=${AGENT_LOG:-app.log}   # relative to heartbeat.toml's folder: heartbeat runs us there
BATCH=5

# JSON string escaping for values we did not write ourselves (log lines,
# instructions): backslashes, quotes, tabs and newlines.
json_str() {
    printf '%s' "$1" | tr '\t\r' '  ' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' |
        awk 'BEGIN { ORS = "" } NR > 1 { print "\\n" } { print }'
}

emit() {  # one protocol line
    printf '%s\n' "$1" >> "$HEARTBEAT_ACTIONS"
}

# Our own data from the last heartbeat: {"offset": N, "tickets": T}. A real
# agent would use jq; sed is enough for two numbers we wrote ourselves.
read_number() {
    value=$(sed -n "s/.*\"$1\": *\([0-9][0-9]*\).*/\1/p" "$HEARTBEAT_DATA")
    printf '%s' "${value:-0}"
}
offset=$(read_number offset)
tickets=$(read_number tickets)

if [ -n "${HEARTBEAT_INSTRUCTIONS:-}" ]; then
    # A human's note after `heartbeat resume --note`, or recovery text after
    # a stuck heartbeat: acknowledge it where the journal will show it.
    echo "  [shell agent] instructions: $HEARTBEAT_INSTRUCTIONS"
    emit "{\"tool\": \"acknowledge\", \"args\": {\"instructions\": \"$(json_str "$HEARTBEAT_INSTRUCTIONS")\"}, \"output\": \"noted; will follow on this heartbeat\"}"
fi

if [ ! -f "$LOG" ]; then
    # A failed tool call is an errored action, not a crash: heartbeat's
    # error_rate detector watches these.
    emit "{\"tool\": \"read_log\", \"args\": {\"file\": \"$(json_str "$LOG")\"}, \"error\": \"no such file\"}"
    exit 0
fi

total=$(wc -l < "$LOG" | tr -d ' ')
if [ "$offset" -ge "$total" ]; then
    # Waiting for new lines is not being stuck: report no progress sample at
    # all (rather than the same number again), so no_progress ignores idle
    # heartbeats. Append a line to the log and the next heartbeat picks it up.
    echo "  [shell agent] no new lines in $LOG"
    exit 0
fi

start=$((offset + 1))
end=$((offset + BATCH))
[ "$end" -le "$total" ] || end=$total
batch=$(sed -n "${start},${end}p" "$LOG")
errors=$(printf '%s\n' "$batch" | grep -c ' ERROR ' || true)
emit "{\"tool\": \"read_log\", \"args\": {\"file\": \"$(json_str "$LOG")\", \"from\": $start, \"to\": $end}, \"output\": \"$((end - start + 1)) lines, $errors error(s)\"}"

printf '%s\n' "$batch" | grep ' ERROR ' | while IFS= read -r line; do
    message=${line#* ERROR }
    emit "{\"tool\": \"open_ticket\", \"args\": {\"title\": \"$(json_str "$message")\"}, \"output\": \"ticket opened: $(json_str "$message")\"}"
done

tickets=$((tickets + errors))
# Progress is the number of lines triaged; data is what the next heartbeat reads.
emit "{\"progress\": $end}"
emit "{\"data\": {\"offset\": $end, \"tickets\": $tickets}}"
echo "  [shell agent] triaged lines $start-$end of $LOG: $errors error(s), $tickets ticket(s) so far"
