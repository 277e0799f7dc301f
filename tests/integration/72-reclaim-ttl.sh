#!/bin/bash
# dsec-reclaim ttl: --ttl counts from create, --idle-ttl from the end of the last exec;
# a sandbox with a command running is not idle; --dry-run destroys nothing; an exec
# records its time without rewriting the state file.
. "$(dirname "$0")/lib.sh"
# Whatever a failure leaves running goes (gc also takes what lost its state).
on_exit 'dsec-run ls 2> /dev/null | jq -r .id | xargs -r dsec-run destroy -f > /dev/null 2>&1; dsec-reclaim gc --grace 0s > /dev/null 2>&1'

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id short --ttl 2s > /dev/null
dsec-run create --layers base --id lazy --idle-ttl 3s > /dev/null
dsec-run create --layers base --id busy --idle-ttl 3s > /dev/null
dsec-run create --layers base --id forever > /dev/null
[ -z "$(dsec-reclaim ttl)" ] || fail "ttl destroyed a fresh sandbox"
# Bad durations are usage errors, with one line on stderr.
expect_exit 2 dsec-reclaim gc --grace soon
expect_exit 2 dsec-reclaim idle --after 5parsecs
[ "$(dsec-reclaim idle --after never 2>&1 > /dev/null | wc -l)" = 1 ] || fail "more than one error line"

# The last exec is the mtime of a file beside the state: the state is not rewritten.
before=$(stat -c %Y.%y "$DSEC_RUN/sandboxes/forever/state.json")
dsec-run exec forever -- true
[ "$(stat -c %Y.%y "$DSEC_RUN/sandboxes/forever/state.json")" = "$before" ] || fail "exec rewrote the state file"
dsec-run ls | jq -se 'map(select(.id == "forever"))[0].last_exec != null' > /dev/null || fail "ls shows no last_exec"

dsec-run exec busy -- sleep 5 &
runner=$!
sleep 3.5
dsec-reclaim ttl --dry-run > "$T/dry.jsonl"
[ "$(jq -sr 'map(.id) | sort | join(" ")' "$T/dry.jsonl")" = "lazy short" ] || fail "dry run: $(cat "$T/dry.jsonl")"
[ -d "$DSEC_RUN/sandboxes/short" ] || fail "--dry-run destroyed"
dsec-reclaim ttl > "$T/ttl.jsonl"
jq -se 'length == 2 and all(.type == "event" and .event == "expired" and .dry_run == false)' "$T/ttl.jsonl" > /dev/null \
    || fail "ttl events: $(cat "$T/ttl.jsonl")"
jq -se 'map({(.id): .reason}) | add == {"short": "ttl", "lazy": "idle_ttl"}' "$T/ttl.jsonl" > /dev/null \
    || fail "ttl reasons: $(cat "$T/ttl.jsonl")"
[ ! -e "$DSEC_RUN/sandboxes/short" ] && [ ! -e "$DSEC_RUN/sandboxes/lazy" ] || fail "expired sandboxes left"

# busy's command ran through; idle time counts from its end.
wait $runner || fail "the command in busy was cut short"
[ -z "$(dsec-reclaim ttl)" ] || fail "busy destroyed right after its command ended"
sleep 3.2
dsec-reclaim ttl | jq -e '.id == "busy" and .reason == "idle_ttl" and .idle_s >= 3' > /dev/null || fail "busy not destroyed"
[ "$(dsec-run ls | jq -r .id)" = forever ] || fail "left: $(dsec-run ls | jq -r .id)"
dsec-run destroy forever > /dev/null
echo "ok"
