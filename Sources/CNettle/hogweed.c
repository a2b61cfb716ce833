// libhogweed (Nettle's public-key half) loaded at the first SSH key
// operation (see CLoader.h); only sshkeys.c calls these.
#include <nettle/ecc-curve.h>
#include <nettle/ecc.h>
#include <nettle/ecdsa.h>
#include <nettle/rsa.h>

#include "CLoader.h"

#define FUNCTIONS(F, P) \
    P(nettle_rsa_public_key_init, (struct rsa_public_key *k), (k)) \
    P(nettle_rsa_public_key_clear, (struct rsa_public_key *k), (k)) \
    F(int, nettle_rsa_public_key_prepare, (struct rsa_public_key *k), (k)) \
    P(nettle_rsa_private_key_init, (struct rsa_private_key *k), (k)) \
    P(nettle_rsa_private_key_clear, (struct rsa_private_key *k), (k)) \
    F(int, nettle_rsa_private_key_prepare, (struct rsa_private_key *k), (k)) \
    F(int, nettle_rsa_sha256_sign_digest_tr, \
        (const struct rsa_public_key *pub, const struct rsa_private_key *key, void *rc, nettle_random_func *r, \
            const uint8_t *digest, mpz_t s), \
        (pub, key, rc, r, digest, s)) \
    F(int, nettle_rsa_sha512_sign_digest_tr, \
        (const struct rsa_public_key *pub, const struct rsa_private_key *key, void *rc, nettle_random_func *r, \
            const uint8_t *digest, mpz_t s), \
        (pub, key, rc, r, digest, s)) \
    F(int, nettle_rsa_sha256_verify_digest, (const struct rsa_public_key *k, const uint8_t *digest, const mpz_t s), \
        (k, digest, s)) \
    F(int, nettle_rsa_sha512_verify_digest, (const struct rsa_public_key *k, const uint8_t *digest, const mpz_t s), \
        (k, digest, s)) \
    F(int, nettle_rsa_generate_keypair, \
        (struct rsa_public_key *pub, struct rsa_private_key *key, void *rc, nettle_random_func *r, void *pc, \
            nettle_progress_func *progress, unsigned n_size, unsigned e_size), \
        (pub, key, rc, r, pc, progress, n_size, e_size)) \
    F(const struct ecc_curve *, nettle_get_secp_256r1, (void), ()) \
    P(nettle_ecc_point_init, (struct ecc_point *p, const struct ecc_curve *c), (p, c)) \
    P(nettle_ecc_point_clear, (struct ecc_point *p), (p)) \
    F(int, nettle_ecc_point_set, (struct ecc_point *p, const mpz_t x, const mpz_t y), (p, x, y)) \
    P(nettle_ecc_point_get, (const struct ecc_point *p, mpz_t x, mpz_t y), (p, x, y)) \
    P(nettle_ecc_scalar_init, (struct ecc_scalar *s, const struct ecc_curve *c), (s, c)) \
    P(nettle_ecc_scalar_clear, (struct ecc_scalar *s), (s)) \
    F(int, nettle_ecc_scalar_set, (struct ecc_scalar *s, const mpz_t z), (s, z)) \
    P(nettle_ecc_scalar_get, (const struct ecc_scalar *s, mpz_t z), (s, z)) \
    P(nettle_ecc_point_mul_g, (struct ecc_point *r, const struct ecc_scalar *n), (r, n)) \
    P(nettle_ecdsa_sign, \
        (const struct ecc_scalar *key, void *rc, nettle_random_func *r, size_t n, const uint8_t *digest, \
            struct dsa_signature *sig), \
        (key, rc, r, n, digest, sig)) \
    F(int, nettle_ecdsa_verify, \
        (const struct ecc_point *pub, size_t n, const uint8_t *digest, const struct dsa_signature *sig), \
        (pub, n, digest, sig)) \
    P(nettle_ecdsa_generate_keypair, \
        (struct ecc_point *pub, struct ecc_scalar *key, void *rc, nettle_random_func *r), (pub, key, rc, r)) \
    P(nettle_dsa_signature_init, (struct dsa_signature *s), (s)) \
    P(nettle_dsa_signature_clear, (struct dsa_signature *s), (s))
#define VARIABLES(V)

FOB_LIBRARY_DEFINE("libhogweed.so.6", FUNCTIONS, VARIABLES)
