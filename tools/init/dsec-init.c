/* dsec-init: pid 1 of a sandbox that lives on (dsec-run create). The init itself is in
 * lib/dsec/ns/init.c; a one-shot sandbox runs the same code without this program. */
#include "dsec/ns/init.h"

int main(int argc, char **argv) { return dsec_init_main(argc, argv); }
