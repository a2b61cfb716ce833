#include <malloc.h>

#include "CSecretService.h"

int fob_ss_trim_heap(void) { return malloc_trim(0); }

int fob_ss_tune_heap(void) {
    return mallopt(M_MMAP_THRESHOLD, 128 * 1024) == 1 && mallopt(M_TRIM_THRESHOLD, 512 * 1024) == 1
           && mallopt(M_PERTURB, 0xA5) == 1;
}
