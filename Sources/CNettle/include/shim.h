#ifndef FOB_CNETTLE_SHIM_H
#define FOB_CNETTLE_SHIM_H
// Nettle (Debian nettle-dev) gives Fob HMAC-SHA-1 for one-time codes
// (RFC 4226, RFC 6238): libsodium has no SHA-1. Its public-key half,
// libhogweed, with GMP, gives the SSH agent RSA (PKCS #1 v1.5 with SHA-256
// and SHA-512) and ECDSA over P-256: libsodium has neither.
//
// Nettle's public names (hmac_sha1_set_key, ...) are macros for the
// nettle_-prefixed symbols, and Swift does not import macros that rename
// functions: Swift code calls nettle_hmac_sha1_set_key and friends directly.
// The SSH key operations are the fob_ssh_* functions below (sshkeys.c):
// each turns big-endian byte strings into GMP numbers, calls Nettle, and
// writes the result back as bytes, so Swift never handles an mpz_t.
#include <stddef.h>
#include <stdint.h>
#include <nettle/hmac.h>
#include <nettle/sha1.h>

/// A random source: fills `length` bytes at `dst` (Nettle's nettle_random_func).
typedef void fob_ssh_random_func(void *ctx, size_t length, uint8_t *dst);

/// A big-endian unsigned number: `count` bytes at `bytes` (leading zeros allowed).
struct fob_ssh_number {
    const uint8_t *bytes;
    size_t count;
};

/// Signs a SHA-256 (`hash` 256, 32-byte digest) or SHA-512 (`hash` 512,
/// 64-byte digest) digest with RSASSA-PKCS1-v1_5 (Nettle's timing-resistant
/// rsa_sha*_sign_digest_tr). The key is OpenSSH's: n, e, d, iqmp (q⁻¹ mod p), p, q.
/// Writes the signature, left-padded to the modulus's size, into
/// `signature` (`signature_size` bytes, at least that size) and its length
/// into `*written`.
/// Returns 1 on success, 0 for a key Nettle refuses (inconsistent, too small) or too small a buffer.
int fob_ssh_rsa_sign(const struct fob_ssh_number *n, const struct fob_ssh_number *e, const struct fob_ssh_number *d,
    const struct fob_ssh_number *iqmp, const struct fob_ssh_number *p, const struct fob_ssh_number *q, int hash,
    const uint8_t *digest, void *random_ctx, fob_ssh_random_func *random, uint8_t *signature, size_t signature_size,
    size_t *written);

/// Verifies an RSASSA-PKCS1-v1_5 signature over a SHA-256 (`hash` 256) or
/// SHA-512 (`hash` 512) digest with the public key (n, e).
/// Returns 1 when it verifies, 0 otherwise (also for a key Nettle refuses).
int fob_ssh_rsa_verify(const struct fob_ssh_number *n, const struct fob_ssh_number *e, int hash, const uint8_t *digest,
    const struct fob_ssh_number *signature);

/// Makes an RSA key of `bits` bits (2048 to 8192) with e = 65537 (Nettle's
/// rsa_generate_keypair). Writes n, e, d, iqmp, p and q big-endian into the
/// six buffers of `out`, each `bits / 8` bytes, and their lengths into `lengths`.
/// Returns 1 on success, 0 on failure.
int fob_ssh_rsa_generate(unsigned bits, void *random_ctx, fob_ssh_random_func *random, uint8_t *const out[6],
    size_t lengths[6]);

/// Signs a 32-byte SHA-256 digest with the P-256 private scalar (32 bytes,
/// big-endian) by ECDSA (Nettle's ecdsa_sign); r and s go out as 32 bytes each, big-endian.
/// Returns 1 on success, 0 for a scalar outside [1, n-1].
int fob_ssh_p256_sign(const uint8_t scalar[32], const uint8_t digest[32], void *random_ctx,
    fob_ssh_random_func *random, uint8_t r[32], uint8_t s[32]);

/// The public point (x, y, 32 bytes each, big-endian) of a P-256 private scalar.
/// Returns 1 on success, 0 for a scalar outside [1, n-1].
int fob_ssh_p256_public(const uint8_t scalar[32], uint8_t x[32], uint8_t y[32]);

/// Verifies an ECDSA P-256 signature (r, s) over a digest with the public point (x, y).
/// Returns 1 when it verifies, 0 otherwise (also for a point not on the curve).
int fob_ssh_p256_verify(const uint8_t x[32], const uint8_t y[32], const uint8_t *digest, size_t digest_length,
    const struct fob_ssh_number *r, const struct fob_ssh_number *s);

/// Makes a P-256 key (Nettle's ecdsa_generate_keypair): the scalar and the point, 32 bytes each, big-endian.
void fob_ssh_p256_generate(void *random_ctx, fob_ssh_random_func *random, uint8_t scalar[32], uint8_t x[32],
    uint8_t y[32]);
#endif
