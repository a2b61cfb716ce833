// Nettle loaded at the first HMAC-SHA-1 (a one-time code; see CLoader.h).
#include "CLoader.h"
#include "shim.h"

#define FUNCTIONS(F, P) \
    P(nettle_hmac_sha1_set_key, (struct hmac_sha1_ctx *c, size_t n, const uint8_t *key), (c, n, key)) \
    P(nettle_hmac_sha1_update, (struct hmac_sha1_ctx *c, size_t n, const uint8_t *data), (c, n, data)) \
    P(nettle_hmac_sha1_digest, (struct hmac_sha1_ctx *c, size_t n, uint8_t *digest), (c, n, digest))
#define VARIABLES(V)

FOB_LIBRARY_DEFINE("libnettle.so.8", FUNCTIONS, VARIABLES)
