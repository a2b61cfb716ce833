#ifndef FOB_CGMP_SHIM_H
#define FOB_CGMP_SHIM_H
// GMP (Debian libgmp-dev): the modular exponentiation of the Secret
// Service's Diffie-Hellman transfer (mpz_powm_sec, constant time).
#include <gmp.h>
#endif
