// The SSH agent's RSA and ECDSA P-256 operations: conversions between
// big-endian byte strings and GMP numbers around Nettle's own functions.
// No arithmetic of a signature scheme is done here; only the two CRT
// exponents Nettle's private key wants (d mod p-1, d mod q-1) are derived.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <nettle/ecc-curve.h>
#include <nettle/ecc.h>
#include <nettle/ecdsa.h>
#include <nettle/rsa.h>

#include "shim.h"

// GMP's memory functions replaced by ones that wipe every block they give
// back, so the limbs of private numbers (and Nettle's temporaries, which
// use the same allocator) do not linger in freed heap memory.
static void *fob_gmp_allocate(size_t size) {
    void *p = malloc(size);
    if (p == NULL) abort();
    return p;
}
static void fob_gmp_free(void *p, size_t size) {
    if (p == NULL) return;
    explicit_bzero(p, size);
    free(p);
}
static void *fob_gmp_reallocate(void *p, size_t old_size, size_t new_size) {
    void *q = fob_gmp_allocate(new_size);
    if (p != NULL) {
        memcpy(q, p, old_size < new_size ? old_size : new_size);
        fob_gmp_free(p, old_size);
    }
    return q;
}
static pthread_once_t fob_gmp_once = PTHREAD_ONCE_INIT;
static void fob_gmp_install(void) {
    mp_set_memory_functions(fob_gmp_allocate, fob_gmp_reallocate, fob_gmp_free);
}
static void fob_gmp_ready(void) { pthread_once(&fob_gmp_once, fob_gmp_install); }

static void fob_import(mpz_t z, const uint8_t *bytes, size_t count) {
    if (count == 0) {
        mpz_set_ui(z, 0);
    } else {
        mpz_import(z, count, 1, 1, 1, 0, bytes);
    }
}

// Writes z big-endian into exactly `size` bytes, left-padded with zeros. Returns 0 when it does not fit.
static int fob_export_padded(const mpz_t z, uint8_t *out, size_t size) {
    size_t needed = (mpz_sizeinbase(z, 2) + 7) / 8;
    if (mpz_sgn(z) < 0 || needed > size) return 0;
    memset(out, 0, size);
    size_t written = 0;
    if (mpz_sgn(z) != 0) mpz_export(out + (size - needed), &written, 1, 1, 1, 0, z);
    return 1;
}


int fob_ssh_rsa_sign(const struct fob_ssh_number *n, const struct fob_ssh_number *e, const struct fob_ssh_number *d,
    const struct fob_ssh_number *iqmp, const struct fob_ssh_number *p, const struct fob_ssh_number *q, int hash,
    const uint8_t *digest, void *random_ctx, fob_ssh_random_func *random, uint8_t *signature, size_t signature_size,
    size_t *written) {
    fob_gmp_ready();
    struct rsa_public_key pub;
    struct rsa_private_key key;
    mpz_t s;
    int ok = 0;
    rsa_public_key_init(&pub);
    rsa_private_key_init(&key);
    mpz_init(s);
    fob_import(pub.n, n->bytes, n->count);
    fob_import(pub.e, e->bytes, e->count);
    fob_import(key.d, d->bytes, d->count);
    fob_import(key.p, p->bytes, p->count);
    fob_import(key.q, q->bytes, q->count);
    fob_import(key.c, iqmp->bytes, iqmp->count);
    // a = d mod (p - 1), b = d mod (q - 1).
    mpz_sub_ui(key.a, key.p, 1);
    mpz_sub_ui(key.b, key.q, 1);
    if (mpz_sgn(key.a) > 0 && mpz_sgn(key.b) > 0) {
        mpz_fdiv_r(key.a, key.d, key.a);
        mpz_fdiv_r(key.b, key.d, key.b);
        if (rsa_public_key_prepare(&pub) && rsa_private_key_prepare(&key) && pub.size == key.size &&
            pub.size <= signature_size) {
            int signed_ok = 0;
            if (hash == 256) {
                signed_ok = rsa_sha256_sign_digest_tr(&pub, &key, random_ctx, random, digest, s);
            } else if (hash == 512) {
                signed_ok = rsa_sha512_sign_digest_tr(&pub, &key, random_ctx, random, digest, s);
            }
            if (signed_ok && fob_export_padded(s, signature, pub.size)) {
                *written = pub.size;
                ok = 1;
            }
        }
    }
    mpz_clear(s);
    rsa_private_key_clear(&key);
    rsa_public_key_clear(&pub);
    return ok;
}

int fob_ssh_rsa_verify(const struct fob_ssh_number *n, const struct fob_ssh_number *e, int hash, const uint8_t *digest,
    const struct fob_ssh_number *signature) {
    fob_gmp_ready();
    struct rsa_public_key pub;
    mpz_t s;
    int ok = 0;
    rsa_public_key_init(&pub);
    mpz_init(s);
    fob_import(pub.n, n->bytes, n->count);
    fob_import(pub.e, e->bytes, e->count);
    fob_import(s, signature->bytes, signature->count);
    if (rsa_public_key_prepare(&pub) && signature->count == pub.size) {
        if (hash == 256) ok = rsa_sha256_verify_digest(&pub, digest, s);
        if (hash == 512) ok = rsa_sha512_verify_digest(&pub, digest, s);
    }
    mpz_clear(s);
    rsa_public_key_clear(&pub);
    return ok;
}

int fob_ssh_rsa_generate(unsigned bits, void *random_ctx, fob_ssh_random_func *random, uint8_t *const out[6],
    size_t lengths[6]) {
    if (bits < 2048 || bits > 8192 || bits % 8 != 0) return 0;
    fob_gmp_ready();
    struct rsa_public_key pub;
    struct rsa_private_key key;
    int ok = 0;
    rsa_public_key_init(&pub);
    rsa_private_key_init(&key);
    mpz_set_ui(pub.e, 65537);
    if (rsa_generate_keypair(&pub, &key, random_ctx, random, NULL, NULL, bits, 0)) {
        // OpenSSH's order: n, e, d, iqmp, p, q; Nettle's c is q⁻¹ mod p, OpenSSH's iqmp.
        mpz_srcptr numbers[6] = {pub.n, pub.e, key.d, key.c, key.p, key.q};
        ok = 1;
        for (int i = 0; i < 6; i++) {
            size_t size = (mpz_sizeinbase(numbers[i], 2) + 7) / 8;
            if (size > bits / 8 || !fob_export_padded(numbers[i], out[i], size)) ok = 0;
            lengths[i] = size;
        }
    }
    rsa_private_key_clear(&key);
    rsa_public_key_clear(&pub);
    return ok;
}

int fob_ssh_p256_sign(const uint8_t scalar[32], const uint8_t digest[32], void *random_ctx,
    fob_ssh_random_func *random, uint8_t r[32], uint8_t s[32]) {
    fob_gmp_ready();
    const struct ecc_curve *curve = nettle_get_secp_256r1();
    struct ecc_scalar key;
    struct dsa_signature signature;
    mpz_t z;
    int ok = 0;
    ecc_scalar_init(&key, curve);
    dsa_signature_init(&signature);
    mpz_init(z);
    fob_import(z, scalar, 32);
    if (ecc_scalar_set(&key, z)) {
        ecdsa_sign(&key, random_ctx, random, 32, digest, &signature);
        ok = fob_export_padded(signature.r, r, 32) && fob_export_padded(signature.s, s, 32);
    }
    mpz_clear(z);
    dsa_signature_clear(&signature);
    ecc_scalar_clear(&key);
    return ok;
}

int fob_ssh_p256_public(const uint8_t scalar[32], uint8_t x[32], uint8_t y[32]) {
    fob_gmp_ready();
    const struct ecc_curve *curve = nettle_get_secp_256r1();
    struct ecc_scalar key;
    struct ecc_point point;
    mpz_t z, px, py;
    int ok = 0;
    ecc_scalar_init(&key, curve);
    ecc_point_init(&point, curve);
    mpz_init(z);
    mpz_init(px);
    mpz_init(py);
    fob_import(z, scalar, 32);
    if (ecc_scalar_set(&key, z)) {
        ecc_point_mul_g(&point, &key);
        ecc_point_get(&point, px, py);
        ok = fob_export_padded(px, x, 32) && fob_export_padded(py, y, 32);
    }
    mpz_clear(py);
    mpz_clear(px);
    mpz_clear(z);
    ecc_point_clear(&point);
    ecc_scalar_clear(&key);
    return ok;
}

int fob_ssh_p256_verify(const uint8_t x[32], const uint8_t y[32], const uint8_t *digest, size_t digest_length,
    const struct fob_ssh_number *r, const struct fob_ssh_number *s) {
    fob_gmp_ready();
    const struct ecc_curve *curve = nettle_get_secp_256r1();
    struct ecc_point point;
    struct dsa_signature signature;
    mpz_t px, py;
    int ok = 0;
    ecc_point_init(&point, curve);
    dsa_signature_init(&signature);
    mpz_init(px);
    mpz_init(py);
    fob_import(px, x, 32);
    fob_import(py, y, 32);
    fob_import(signature.r, r->bytes, r->count);
    fob_import(signature.s, s->bytes, s->count);
    if (ecc_point_set(&point, px, py)) ok = ecdsa_verify(&point, digest_length, digest, &signature);
    mpz_clear(py);
    mpz_clear(px);
    dsa_signature_clear(&signature);
    ecc_point_clear(&point);
    return ok;
}

void fob_ssh_p256_generate(void *random_ctx, fob_ssh_random_func *random, uint8_t scalar[32], uint8_t x[32],
    uint8_t y[32]) {
    fob_gmp_ready();
    const struct ecc_curve *curve = nettle_get_secp_256r1();
    struct ecc_scalar key;
    struct ecc_point point;
    mpz_t z, px, py;
    ecc_scalar_init(&key, curve);
    ecc_point_init(&point, curve);
    mpz_init(z);
    mpz_init(px);
    mpz_init(py);
    ecdsa_generate_keypair(&point, &key, random_ctx, random);
    ecc_scalar_get(&key, z);
    ecc_point_get(&point, px, py);
    fob_export_padded(z, scalar, 32);
    fob_export_padded(px, x, 32);
    fob_export_padded(py, y, 32);
    mpz_clear(py);
    mpz_clear(px);
    mpz_clear(z);
    ecc_point_clear(&point);
    ecc_scalar_clear(&key);
}
