# fish completion for dsec-guard
set -l subs check net apply events refresh
function __dsec_guard_ids
    ls (set -q DSEC_RUN; and echo $DSEC_RUN; or echo /run/dsec)/sandboxes 2>/dev/null
end
complete -c dsec-guard -f
complete -c dsec-guard -l root -r -d 'state directory'
complete -c dsec-guard -l run -r -d 'runtime directory'
complete -c dsec-guard -l store -r -d 'layer store directory'
complete -c dsec-guard -l help -d 'show help'
complete -c dsec-guard -l version -d 'show version'
complete -c dsec-guard -n "not __fish_seen_subcommand_from $subs" -a check -d 'validate policies'
complete -c dsec-guard -n "not __fish_seen_subcommand_from $subs" -a net -d 'change a running sandbox egress rules'
complete -c dsec-guard -n "not __fish_seen_subcommand_from $subs" -a apply -d 'put a policy network rules in force'
complete -c dsec-guard -n "not __fish_seen_subcommand_from $subs" -a events -d 'egress denials as event records'
complete -c dsec-guard -n "not __fish_seen_subcommand_from $subs" -a refresh -d 'resolve egress domain names again'
complete -c dsec-guard -n "__fish_seen_subcommand_from check" -F -d 'policy file'
complete -c dsec-guard -n "__fish_seen_subcommand_from net; and not __fish_seen_subcommand_from allow deny" -a 'allow deny'
complete -c dsec-guard -n "__fish_seen_subcommand_from allow deny apply" -a '(__dsec_guard_ids)' -d sandbox
complete -c dsec-guard -n "__fish_seen_subcommand_from apply" -F -d 'policy file'
complete -c dsec-guard -n "__fish_seen_subcommand_from events" -a '(__dsec_guard_ids)' -d sandbox
complete -c dsec-guard -n "__fish_seen_subcommand_from events" -s f -l follow -d 'keep printing new denials'
complete -c dsec-guard -n "__fish_seen_subcommand_from events" -l interval -r -d 'seconds between looks'
complete -c dsec-guard -n "__fish_seen_subcommand_from refresh" -a '(__dsec_guard_ids)' -d sandbox
