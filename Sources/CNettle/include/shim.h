#ifndef FOB_CNETTLE_SHIM_H
#define FOB_CNETTLE_SHIM_H
// Nettle (Debian nettle-dev) gives Fob HMAC-SHA-1 for one-time codes
// (RFC 4226, RFC 6238): libsodium has no SHA-1.
//
// Nettle's public names (hmac_sha1_set_key, ...) are macros for the
// nettle_-prefixed symbols, and Swift does not import macros that rename
// functions: Swift code calls nettle_hmac_sha1_set_key and friends directly.
#include <nettle/hmac.h>
#include <nettle/sha1.h>
#endif
