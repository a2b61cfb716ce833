#ifndef FOB_CSODIUM_SHIM_H
#define FOB_CSODIUM_SHIM_H
#include <sodium.h>
#include <sys/prctl.h>
#include <sys/resource.h>

// prctl is variadic, which Swift cannot call: wrap the one use Fob has.
static inline int fob_disable_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
#endif
