# fish completion for dsec-mount
set -l subs ls release umount
function __dsec_mount_layers
    set -l store /var/lib/dsec/layers
    set -q DSEC_ROOT; and set store $DSEC_ROOT/layers
    set -q DSEC_STORE; and set store $DSEC_STORE
    ls $store/names 2>/dev/null
end
function __dsec_mount_mounted
    set -l run /run/dsec
    set -q DSEC_RUN; and set run $DSEC_RUN
    ls $run/layers 2>/dev/null
end
complete -c dsec-mount -f
complete -c dsec-mount -l root -r -d 'state directory'
complete -c dsec-mount -l run -r -d 'runtime directory'
complete -c dsec-mount -l store -r -d 'layer store directory'
complete -c dsec-mount -l help -d 'show help'
complete -c dsec-mount -l version -d 'show version'
complete -c dsec-mount -n "not __fish_seen_subcommand_from $subs" -l count -x -d 'number of rootfs records'
complete -c dsec-mount -n "not __fish_seen_subcommand_from $subs" -l id -x -d 'sandbox id'
complete -c dsec-mount -n "not __fish_seen_subcommand_from $subs" -l verify -d 'check digests before the first mount'
complete -c dsec-mount -n "not __fish_seen_subcommand_from $subs" -l at -r -a '(__fish_complete_directories)' -d 'assemble the overlay at DIR'
complete -c dsec-mount -n "not __fish_seen_subcommand_from $subs" -l read-only -d 'with --at: layers only'
complete -c dsec-mount -n "not __fish_seen_subcommand_from $subs" -a ls -d 'list mounted layers'
complete -c dsec-mount -n "not __fish_seen_subcommand_from $subs" -a release -d 'unmount unused layers'
complete -c dsec-mount -n "not __fish_seen_subcommand_from $subs" -a umount -d 'take down an --at overlay'
complete -c dsec-mount -n "not __fish_seen_subcommand_from $subs" -a '(__dsec_mount_layers)'
complete -c dsec-mount -n "__fish_seen_subcommand_from release" -a '(__dsec_mount_mounted)'
complete -c dsec-mount -n "__fish_seen_subcommand_from umount" -a '(__fish_complete_directories)'
