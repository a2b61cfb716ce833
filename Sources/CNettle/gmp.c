// GMP loaded at the first SSH key operation (see CLoader.h); only
// sshkeys.c calls these. (fob-secret-service links GMP itself; in its
// binary these stand-ins load the same library.)
#include <gmp.h>

#include "CLoader.h"

#define FUNCTIONS(F, P) \
    P(__gmpz_init, (mpz_ptr z), (z)) \
    P(__gmpz_clear, (mpz_ptr z), (z)) \
    P(__gmpz_import, (mpz_ptr z, size_t count, int order, size_t size, int endian, size_t nails, const void *op), \
        (z, count, order, size, endian, nails, op)) \
    F(void *, __gmpz_export, \
        (void *rop, size_t *count, int order, size_t size, int endian, size_t nails, mpz_srcptr z), \
        (rop, count, order, size, endian, nails, z)) \
    F(size_t, __gmpz_sizeinbase, (mpz_srcptr z, int base), (z, base)) \
    P(__gmpz_sub_ui, (mpz_ptr r, mpz_srcptr a, unsigned long b), (r, a, b)) \
    P(__gmpz_fdiv_r, (mpz_ptr r, mpz_srcptr n, mpz_srcptr d), (r, n, d)) \
    P(__gmpz_set_ui, (mpz_ptr r, unsigned long v), (r, v)) \
    P(__gmp_set_memory_functions, \
        (void *(*a)(size_t), void *(*r)(void *, size_t, size_t), void (*f)(void *, size_t)), (a, r, f))
#define VARIABLES(V)

FOB_LIBRARY_DEFINE("libgmp.so.10", FUNCTIONS, VARIABLES)
