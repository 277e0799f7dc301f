# fish completion for dsec-slurm
complete -c dsec-slurm -l results -r -F -d 'shared directory for the task records'
complete -c dsec-slurm -l local -d 'run the array tasks here, without Slurm'
complete -c dsec-slurm -l help -d 'show help'
complete -c dsec-slurm -l version -d 'show version'
complete -c dsec-slurm -l rerun -r -F -d 'rerun what did not succeed in a results directory'
complete -c dsec-slurm -n '__fish_is_first_arg' -a 'task merge' -d 'one array task / merge the task records (for other schedulers)'
