#include "CSecretService.h"

#include <gmp.h>
#include <nettle/aes.h>
#include <nettle/cbc.h>
#include <nettle/hkdf.h>
#include <nettle/hmac.h>
#include <string.h>

// RFC 2409, section 6.2: the 1024-bit MODP group, generator 2.
const uint8_t fob_ss_oakley2_prime[128] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xC9, 0x0F, 0xDA, 0xA2, 0x21, 0x68, 0xC2, 0x34,
    0xC4, 0xC6, 0x62, 0x8B, 0x80, 0xDC, 0x1C, 0xD1, 0x29, 0x02, 0x4E, 0x08, 0x8A, 0x67, 0xCC, 0x74,
    0x02, 0x0B, 0xBE, 0xA6, 0x3B, 0x13, 0x9B, 0x22, 0x51, 0x4A, 0x08, 0x79, 0x8E, 0x34, 0x04, 0xDD,
    0xEF, 0x95, 0x19, 0xB3, 0xCD, 0x3A, 0x43, 0x1B, 0x30, 0x2B, 0x0A, 0x6D, 0xF2, 0x5F, 0x14, 0x37,
    0x4F, 0xE1, 0x35, 0x6D, 0x6D, 0x51, 0xC2, 0x45, 0xE4, 0x85, 0xB5, 0x76, 0x62, 0x5E, 0x7E, 0xC6,
    0xF4, 0x4C, 0x42, 0xE9, 0xA6, 0x37, 0xED, 0x6B, 0x0B, 0xFF, 0x5C, 0xB6, 0xF4, 0x06, 0xB7, 0xED,
    0xEE, 0x38, 0x6B, 0xFB, 0x5A, 0x89, 0x9F, 0xA5, 0xAE, 0x9F, 0x24, 0x11, 0x7C, 0x4B, 0x1F, 0xE6,
    0x49, 0x28, 0x66, 0x51, 0xEC, 0xE6, 0x53, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
};

int fob_ss_oakley2_powm(const uint8_t *base, size_t base_length, const uint8_t *exponent, size_t exponent_length,
                        uint8_t out[128]) {
    mpz_t p, limit, b, e, r;
    mpz_inits(p, limit, b, e, r, NULL);
    mpz_import(p, 128, 1, 1, 1, 0, fob_ss_oakley2_prime);
    mpz_sub_ui(limit, p, 1);
    mpz_import(b, base_length, 1, 1, 1, 0, base);
    mpz_import(e, exponent_length, 1, 1, 1, 0, exponent);
    int status = -1;
    // mpz_powm_sec needs an odd modulus and a positive exponent.
    if (mpz_cmp_ui(b, 1) > 0 && mpz_cmp(b, limit) < 0 && mpz_sgn(e) > 0) {
        mpz_powm_sec(r, b, e, p);
        size_t count = 0;
        uint8_t buffer[128];
        mpz_export(buffer, &count, 1, 1, 1, 0, r);
        memset(out, 0, 128);
        memcpy(out + (128 - count), buffer, count);
        memset(buffer, 0, sizeof buffer);
        status = 0;
    }
    // Overwrite the secret exponent and result before freeing their limbs.
    mpz_set_ui(e, 0);
    mpz_set_ui(r, 0);
    mpz_clears(p, limit, b, e, r, NULL);
    return status;
}

void fob_ss_hkdf_sha256(const uint8_t *key_material, size_t key_material_length, uint8_t *out, size_t out_length) {
    struct hmac_sha256_ctx ctx;
    uint8_t prk[SHA256_DIGEST_SIZE];
    static const uint8_t zero_salt[SHA256_DIGEST_SIZE] = {0};
    // RFC 5869 2.2: no salt is a salt of HashLen zero bytes.
    hmac_sha256_set_key(&ctx, sizeof zero_salt, zero_salt);
    hkdf_extract(&ctx, (nettle_hash_update_func *)hmac_sha256_update, (nettle_hash_digest_func *)hmac_sha256_digest,
                 SHA256_DIGEST_SIZE, key_material_length, key_material, prk);
    hmac_sha256_set_key(&ctx, sizeof prk, prk);
    hkdf_expand(&ctx, (nettle_hash_update_func *)hmac_sha256_update, (nettle_hash_digest_func *)hmac_sha256_digest,
                SHA256_DIGEST_SIZE, 0, NULL, out_length, out);
    memset(prk, 0, sizeof prk);
    memset(&ctx, 0, sizeof ctx);
}

void fob_ss_aes128_cbc(int encrypt, const uint8_t key[16], const uint8_t iv[16], const uint8_t *in, size_t length,
                       uint8_t *out) {
    struct aes128_ctx ctx;
    uint8_t chain[AES_BLOCK_SIZE];
    memcpy(chain, iv, AES_BLOCK_SIZE);
    if (encrypt) {
        aes128_set_encrypt_key(&ctx, key);
        cbc_encrypt(&ctx, (nettle_cipher_func *)aes128_encrypt, AES_BLOCK_SIZE, chain, length, out, in);
    } else {
        aes128_set_decrypt_key(&ctx, key);
        cbc_decrypt(&ctx, (nettle_cipher_func *)aes128_decrypt, AES_BLOCK_SIZE, chain, length, out, in);
    }
    memset(&ctx, 0, sizeof ctx);
    memset(chain, 0, sizeof chain);
}
