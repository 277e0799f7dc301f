# fish completion for dsec-reclaim
set -l subs gc ttl status idle resume swap ksm
function __dsec_reclaim_sandboxes
    set -l run /run/dsec
    set -q DSEC_RUN; and set run $DSEC_RUN
    ls $run/sandboxes 2>/dev/null
end
complete -c dsec-reclaim -f
complete -c dsec-reclaim -l root -r -d 'state directory'
complete -c dsec-reclaim -l run -r -d 'runtime directory'
complete -c dsec-reclaim -l store -r -d 'layer store directory'
complete -c dsec-reclaim -l help -d 'show help'
complete -c dsec-reclaim -l version -d 'show version'
complete -c dsec-reclaim -n "not __fish_seen_subcommand_from $subs" -a gc -d 'remove what crashed runs left'
complete -c dsec-reclaim -n "not __fish_seen_subcommand_from $subs" -a ttl -d 'destroy sandboxes past their TTL'
complete -c dsec-reclaim -n "not __fish_seen_subcommand_from $subs" -a status -d 'memory, state and idle time'
complete -c dsec-reclaim -n "not __fish_seen_subcommand_from $subs" -a idle -d 'pause idle sandboxes, reclaim memory'
complete -c dsec-reclaim -n "not __fish_seen_subcommand_from $subs" -a resume -d 'thaw paused sandboxes'
complete -c dsec-reclaim -n "not __fish_seen_subcommand_from $subs" -a swap -d 'compressed swap in memory'
complete -c dsec-reclaim -n "not __fish_seen_subcommand_from $subs" -a ksm -d 'samepage merging'
complete -c dsec-reclaim -n "__fish_seen_subcommand_from gc ttl idle" -l dry-run -d 'list only'
complete -c dsec-reclaim -n "__fish_seen_subcommand_from gc" -l grace -x -d 'spare debris younger than DURATION'
complete -c dsec-reclaim -n "__fish_seen_subcommand_from idle" -l after -x -d 'idle for DURATION'
complete -c dsec-reclaim -n "__fish_seen_subcommand_from idle" -l sample -x -d 'measure CPU over DURATION'
complete -c dsec-reclaim -n "__fish_seen_subcommand_from resume" -a '(__dsec_reclaim_sandboxes)'
complete -c dsec-reclaim -n "__fish_seen_subcommand_from swap" -l zram -x -d 'zram swap of SIZE'
complete -c dsec-reclaim -n "__fish_seen_subcommand_from swap" -l off -d 'remove the zram swap'
complete -c dsec-reclaim -n "__fish_seen_subcommand_from ksm" -a 'on off status'
