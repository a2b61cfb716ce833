#ifndef FOB_CSODIUM_SHIM_H
#define FOB_CSODIUM_SHIM_H
#include <sodium.h>
#endif
