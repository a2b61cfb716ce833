#include <malloc.h>

#include "CSecretService.h"

int fob_ss_trim_heap(void) { return malloc_trim(0); }
