# fish completion for dsec-run
set -l subs create exec run cp ls inspect destroy snapshot fork reset kill stats session log logs wait pool
function __dsec_run_ids
    set -l run /run/dsec
    set -q DSEC_RUN; and set run $DSEC_RUN
    ls $run/sandboxes 2>/dev/null
end
complete -c dsec-run -f
complete -c dsec-run -l root -r -d 'state directory'
complete -c dsec-run -l run -r -d 'runtime directory'
complete -c dsec-run -l store -r -d 'layer store directory'
complete -c dsec-run -l help -d 'show help'
complete -c dsec-run -l version -d 'show version'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a create -d 'create sandboxes'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a exec -d 'run a command in sandboxes'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a run -d 'create, run once, destroy'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a cp -d 'copy files into or out of a sandbox'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a ls -d 'list sandboxes'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a inspect -d 'show sandboxes in full'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a destroy -d 'kill and remove sandboxes'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a snapshot -d 'pack a sandbox into a new layer'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a fork -d 'new sandboxes from a running one'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a reset -d 'put sandboxes back to their layers'
# create and run
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l id -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l hostname -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l memory -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l memcg -x -a 'own shared' -d 'memory cgroup: own or shared'
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l cpus -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l pids -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l disk -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -s e -l env -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -s w -l workdir -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -s u -l user -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l ttl -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l idle-ttl -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l class -x -a 'latency batch' -d 'CPU class'
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l label -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l policy -r
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l layers -x -a '(__dsec_run_layer_list)' -d 'layer names, base first'
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l network -r -a none
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l verify -d 'verify layer digests'
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l userns -r -a 'private host' -d 'user namespace'
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l cap-add -r -d 'keep a capability'
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l cap-drop -r -d 'drop a capability'
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l seccomp -r -F -d 'default, unconfined or a profile'
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l tmp-size -r -d 'size of /tmp, /dev/shm'
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l ulimit -r -d 'NAME=SOFT[:HARD]'
complete -c dsec-run -n "__fish_seen_subcommand_from create run fill" -l bind -r -F -d 'SRC:DST[:ro|rw], read-only by default'
complete -c dsec-run -n "__fish_seen_subcommand_from create exec destroy" -s P -l parallel -r -d 'at once'
# exec and run
complete -c dsec-run -n "__fish_seen_subcommand_from exec run" -l json -d 'capture output into a result record'
complete -c dsec-run -n "__fish_seen_subcommand_from exec run" -s i -l interactive -d 'relay stdin to the command'
complete -c dsec-run -n "__fish_seen_subcommand_from exec run" -l no-stdin -d 'stdin is /dev/null'
complete -c dsec-run -n "__fish_seen_subcommand_from exec run" -s t -l tty -d 'pseudo-terminal'
complete -c dsec-run -n "__fish_seen_subcommand_from exec run" -l timeout -r
complete -c dsec-run -n "__fish_seen_subcommand_from exec run" -l no-output-timeout -r
complete -c dsec-run -n "__fish_seen_subcommand_from exec run" -l output-limit -r
complete -c dsec-run -n "__fish_seen_subcommand_from exec" -s e -l env -r
complete -c dsec-run -n "__fish_seen_subcommand_from exec" -s w -l workdir -r
complete -c dsec-run -n "__fish_seen_subcommand_from exec" -s u -l user -r
complete -c dsec-run -n "__fish_seen_subcommand_from run" -l keep -d 'keep the sandbox'
complete -c dsec-run -n "__fish_seen_subcommand_from run" -l upper-on-disk -d 'writable upper on local disk, not in memory'
complete -c dsec-run -n "__fish_seen_subcommand_from cp" -l max-bytes -r -d 'cap on the file bytes copied'
complete -c dsec-run -n "__fish_seen_subcommand_from cp" -l max-entries -r -d 'cap on the entries copied'
complete -c dsec-run -n "__fish_seen_subcommand_from cp; and not string match -q -- '*:*' (commandline -ct)" -F
complete -c dsec-run -n "__fish_seen_subcommand_from ls" -l label -r
complete -c dsec-run -n "__fish_seen_subcommand_from ls" -l state -r -a 'running paused dead creating destroying broken' -d 'only this state'
complete -c dsec-run -n "__fish_seen_subcommand_from ls" -l older-than -r -d 'created at least this long ago'
complete -c dsec-run -n "__fish_seen_subcommand_from ls" -l newer-than -r -d 'created at most this long ago'
complete -c dsec-run -n "__fish_seen_subcommand_from ls" -l layer -x -a '(__dsec_run_layer_list)' -d 'holds this layer (name or digest)'
complete -c dsec-run -n "__fish_seen_subcommand_from ls" -s q -l quiet -d 'ids only'
complete -c dsec-run -n "__fish_seen_subcommand_from ls" -l json -d 'records on a terminal too'
complete -c dsec-run -n "__fish_seen_subcommand_from destroy" -s f -l force -d 'unknown ids are not an error'
complete -c dsec-run -n "__fish_seen_subcommand_from snapshot" -l name -r -d 'name of the new layer'
complete -c dsec-run -n "__fish_seen_subcommand_from snapshot fork" -l policy -r -F -d 'policy file with "scrub" paths'
complete -c dsec-run -n "__fish_seen_subcommand_from snapshot fork" -l keep-special -d 'keep set-id bits, devices, file caps'
complete -c dsec-run -n "__fish_seen_subcommand_from snapshot fork" -l compress -r -a 'none lz4 lz4hc' -d 'image compression'
complete -c dsec-run -n "__fish_seen_subcommand_from fork" -s n -l count -r -d 'how many sandboxes'
complete -c dsec-run -n "__fish_seen_subcommand_from fork reset" -s P -l parallel -r -d 'at once'
complete -c dsec-run -n "__fish_seen_subcommand_from create reset" -l standby -d 'keep a stopped init ready for the next reset'
complete -c dsec-run -n "__fish_seen_subcommand_from exec inspect destroy snapshot fork reset kill stats log" -a "(__dsec_run_ids)"
# cp: ID: (a path inside follows), a host path (-F above), or - for a tar stream.
complete -c dsec-run -n "__fish_seen_subcommand_from cp; and not string match -q -- '*:*' (commandline -ct)" -a "(__dsec_run_ids | string replace -r '\$' ':')" -d sandbox
complete -c dsec-run -n "__fish_seen_subcommand_from cp" -a - -d 'tar stream on stdin or stdout'
function __dsec_run_layer_list
    set -l store /var/lib/dsec/layers
    set -q DSEC_ROOT; and set store $DSEC_ROOT/layers
    set -q DSEC_STORE; and set store $DSEC_STORE
    set -l head (string replace -r '[^,]*$' '' -- (commandline -ct | string replace -r '^--layers=' ''))
    for name in (ls $store/names 2>/dev/null)
        echo $head$name
    end
end
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a kill -d 'signal the commands in sandboxes'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a stats -d 'resource use of sandboxes now'
complete -c dsec-run -n "__fish_seen_subcommand_from kill" -s s -l signal -r -a 'TERM KILL INT HUP QUIT USR1 USR2 STOP CONT' -d 'signal'

complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a session -d 'persistent shells in a sandbox'
function __dsec_run_sessions
    set -l run /run/dsec
    set -q DSEC_RUN; and set run $DSEC_RUN
    for d in $run/sandboxes/*/sessions/*
        string replace -r '.*/sandboxes/([^/]*)/sessions/' '$1@' $d
    end
end
set -l session_actions open exec ls close
complete -c dsec-run -n "__fish_seen_subcommand_from session; and not __fish_seen_subcommand_from $session_actions" -a open -d 'start a shell in a sandbox'
complete -c dsec-run -n "__fish_seen_subcommand_from session; and not __fish_seen_subcommand_from $session_actions" -a exec -d 'run a command string in a session'
complete -c dsec-run -n "__fish_seen_subcommand_from session; and not __fish_seen_subcommand_from $session_actions" -a ls -d 'list sessions'
complete -c dsec-run -n "__fish_seen_subcommand_from session; and not __fish_seen_subcommand_from $session_actions" -a close -d 'end sessions'
complete -c dsec-run -n "__fish_seen_subcommand_from session; and __fish_seen_subcommand_from open" -l shell -r -d 'the shell to run'
complete -c dsec-run -n "__fish_seen_subcommand_from session; and __fish_seen_subcommand_from open ls" -a "(__dsec_run_ids)"
complete -c dsec-run -n "__fish_seen_subcommand_from session; and __fish_seen_subcommand_from exec close" -a "(__dsec_run_sessions)"
complete -c dsec-run -n "__fish_seen_subcommand_from session; and __fish_seen_subcommand_from open" -s e -l env -r -d 'K=V'
complete -c dsec-run -n "__fish_seen_subcommand_from session; and __fish_seen_subcommand_from open" -s w -l workdir -r -d 'first working directory'
complete -c dsec-run -n "__fish_seen_subcommand_from session; and __fish_seen_subcommand_from open" -s u -l user -r -d 'USER[:GROUP]'
complete -c dsec-run -n "__fish_seen_subcommand_from session; and __fish_seen_subcommand_from open" -s t -l pty -d 'commands run on a terminal'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a log -d "a sandbox's command log"
complete -c dsec-run -n "__fish_seen_subcommand_from log" -s f -l follow -d 'keep printing as records come'
complete -c dsec-run -n "__fish_seen_subcommand_from destroy" -l keep-log -r -d 'copy the command log to this directory first'
complete -c dsec-run -n "__fish_seen_subcommand_from exec" -s d -l detach -d 'start and return at once; see logs, wait'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a logs -d 'output of a detached exec'
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a wait -d 'wait for a detached exec or a sandbox'
complete -c dsec-run -n "__fish_seen_subcommand_from logs" -s f -l follow -d 'until the command ends'
function __dsec_run_execs
    set -l run /run/dsec
    set -q DSEC_RUN; and set run $DSEC_RUN
    set -l words (commandline -opc)
    set -l args
    for w in $words[3..-1]
        string match -q -- '-*' $w; or set -a args $w
    end
    if test (count $args) -eq 0
        __dsec_run_ids
    else if test (count $args) -eq 1
        ls $run/sandboxes/$args[1]/execs 2>/dev/null
    end
end
complete -c dsec-run -n "__fish_seen_subcommand_from logs wait" -a "(__dsec_run_execs)"
# pool fill|ls|drain (fill takes the create options above)
complete -c dsec-run -n "not __fish_seen_subcommand_from $subs" -a pool -d 'sandboxes made ahead for run --pool'
complete -c dsec-run -n "__fish_seen_subcommand_from run" -l pool -r -d 'draw from N made ahead'
function __dsec_run_pools
    set -l run /run/dsec
    set -q DSEC_RUN; and set run $DSEC_RUN
    ls $run/pools 2>/dev/null
end
set -l pool_actions fill ls drain
complete -c dsec-run -n "__fish_seen_subcommand_from pool; and not __fish_seen_subcommand_from $pool_actions" -a fill -d 'create sandboxes until the pool holds N'
complete -c dsec-run -n "__fish_seen_subcommand_from pool; and not __fish_seen_subcommand_from $pool_actions" -a ls -d 'one record per pool'
complete -c dsec-run -n "__fish_seen_subcommand_from pool; and not __fish_seen_subcommand_from $pool_actions" -a drain -d 'destroy a pool and its sandboxes'
complete -c dsec-run -n "__fish_seen_subcommand_from pool; and __fish_seen_subcommand_from fill" -s n -l count -r -d 'sandboxes the pool holds'
complete -c dsec-run -n "__fish_seen_subcommand_from pool; and __fish_seen_subcommand_from fill" -l upper-on-disk -d 'for runs with --upper-on-disk'
complete -c dsec-run -n "__fish_seen_subcommand_from pool; and __fish_seen_subcommand_from ls drain" -a "(__dsec_run_pools)"
