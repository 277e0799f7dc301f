# fish completion for dsec-guard
set -l subs check
complete -c dsec-guard -f
complete -c dsec-guard -l root -r -d 'state directory'
complete -c dsec-guard -l run -r -d 'runtime directory'
complete -c dsec-guard -l store -r -d 'layer store directory'
complete -c dsec-guard -l help -d 'show help'
complete -c dsec-guard -l version -d 'show version'
complete -c dsec-guard -n "not __fish_seen_subcommand_from $subs" -a check -d 'validate policies'
complete -c dsec-guard -n "__fish_seen_subcommand_from check" -F -d 'policy file'
