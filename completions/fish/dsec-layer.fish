# fish completion for dsec-layer
set -l subs build import import-image export ls inspect tag rm verify gc publish
function __dsec_layer_names
    set -l store /var/lib/dsec/layers
    set -q DSEC_ROOT; and set store $DSEC_ROOT/layers
    set -q DSEC_STORE; and set store $DSEC_STORE
    ls $store/names 2>/dev/null
end
complete -c dsec-layer -f
complete -c dsec-layer -l root -r -d 'state directory'
complete -c dsec-layer -l run -r -d 'runtime directory'
complete -c dsec-layer -l store -r -d 'layer store directory'
complete -c dsec-layer -l help -d 'show help'
complete -c dsec-layer -l version -d 'show version'
complete -c dsec-layer -n "not __fish_seen_subcommand_from $subs" -a build -d 'build a layer from a directory tree'
complete -c dsec-layer -n "not __fish_seen_subcommand_from $subs" -a import -d 'import a tar archive'
complete -c dsec-layer -n "not __fish_seen_subcommand_from $subs" -a import-image -d 'import an OCI or docker save image'
complete -c dsec-layer -n "not __fish_seen_subcommand_from $subs" -a export -d 'write a layer as a tar.zst stream'
complete -c dsec-layer -n "not __fish_seen_subcommand_from $subs" -a ls -d 'list layers'
complete -c dsec-layer -n "not __fish_seen_subcommand_from $subs" -a inspect -d 'show a layer in full'
complete -c dsec-layer -n "not __fish_seen_subcommand_from $subs" -a tag -d 'name a layer'
complete -c dsec-layer -n "not __fish_seen_subcommand_from $subs" -a rm -d 'remove layers'
complete -c dsec-layer -n "not __fish_seen_subcommand_from $subs" -a verify -d 'check digests and images'
complete -c dsec-layer -n "not __fish_seen_subcommand_from $subs" -a gc -d 'remove unnamed layers and leftovers'
complete -c dsec-layer -n "not __fish_seen_subcommand_from $subs" -a publish -d 'copy layers into a shared store'
complete -c dsec-layer -n "__fish_seen_subcommand_from publish" -l to -r -F -d 'store to publish into'
complete -c dsec-layer -n "__fish_seen_subcommand_from publish" -l name -r -d 'name there'
complete -c dsec-layer -n "__fish_seen_subcommand_from build" -F -a '(__fish_complete_directories)'
complete -c dsec-layer -n "__fish_seen_subcommand_from build import import-image" -l name -r -d 'layer name'
complete -c dsec-layer -n "__fish_seen_subcommand_from build import import-image" -l label -r -d 'label key=value'
complete -c dsec-layer -n "__fish_seen_subcommand_from build import import-image" -l compress -x -a 'none lz4 lz4hc' -d compression
complete -c dsec-layer -n "__fish_seen_subcommand_from import import-image" -F
complete -c dsec-layer -n "__fish_seen_subcommand_from import import-image" -l max-size -r -d 'cap on extracted bytes'
complete -c dsec-layer -n "__fish_seen_subcommand_from import import-image" -l max-entries -r -d 'cap on archive entries'
complete -c dsec-layer -n "__fish_seen_subcommand_from import" -l oci-layer -d 'apply OCI whiteouts'
complete -c dsec-layer -n "__fish_seen_subcommand_from import-image" -l squash -d 'one layer for the whole image'
complete -c dsec-layer -n "__fish_seen_subcommand_from import-image" -l platform -x -d 'platform, e.g. linux/amd64'
complete -c dsec-layer -n "__fish_seen_subcommand_from export" -s o -l output -r -d 'output file'
complete -c dsec-layer -n "__fish_seen_subcommand_from export" -l level -x -d 'zstd level'
complete -c dsec-layer -n "__fish_seen_subcommand_from rm" -l name-only -d 'remove only the name'
complete -c dsec-layer -n "__fish_seen_subcommand_from rm" -l all-names -d 'remove the layer with all its names'
complete -c dsec-layer -n "__fish_seen_subcommand_from gc" -s n -l dry-run -d 'report only'
complete -c dsec-layer -n "__fish_seen_subcommand_from export ls inspect tag rm verify publish" -a '(__dsec_layer_names)'
complete -c dsec-layer -n "__fish_seen_subcommand_from ls" -s q -l quiet -d 'digests only'
complete -c dsec-layer -n "__fish_seen_subcommand_from ls" -l json -d 'records on a terminal too'
