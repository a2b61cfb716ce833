#ifndef FOB_CSECRETSERVICE_H
#define FOB_CSECRETSERVICE_H
// The parts of the Secret Service provider that Swift cannot write:
// sd-bus vtables (SD_BUS_METHOD and friends are macros that build static
// tables, which Swift does not import), the byte-level glue of the
// Diffie-Hellman transfer around GMP and Nettle, and the kernel keyring's
// system calls.
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

// Implemented in Swift (FobSecretService, @_cdecl): every method of every
// interface, every property read and write, and the lookup of item and
// session objects.
int fob_ss_call(sd_bus_message *message, void *userdata, sd_bus_error *error);
int fob_ss_get_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error);
int fob_ss_set_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *value, void *userdata, sd_bus_error *error);
int fob_ss_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                sd_bus_error *error);

/// The vtables of the five interfaces of the Secret Service API
/// (https://specifications.freedesktop.org/secret-service-spec/latest/).
const sd_bus_vtable *fob_ss_service_vtable(void);
const sd_bus_vtable *fob_ss_collection_vtable(void);
const sd_bus_vtable *fob_ss_item_vtable(void);
const sd_bus_vtable *fob_ss_session_vtable(void);
const sd_bus_vtable *fob_ss_prompt_vtable(void);

/// Gives the heap's free pages back to the system (glibc's `malloc_trim(0)`),
/// after a large answer was freed; returns 1 when memory was released.
int fob_ss_trim_heap(void);

/// Keeps glibc's heap small for a process that now and then handles one
/// very large answer: buffers of 128 KiB or more always get their own
/// mapping, given back when freed (glibc would otherwise raise that
/// threshold after the first such free, up to 32 MiB, and keep later large
/// buffers in the heap), and free memory at the heap's top past 512 KiB
/// goes back at once (`mallopt(3)`); and every freed buffer is overwritten
/// (`M_PERTURB`), so names and secrets that passed through sd-bus's
/// messages or Swift's arrays do not stay in freed memory. glibc's
/// per-thread cache skips that overwrite: the provider runs with it off
/// (`GLIBC_TUNABLES=glibc.malloc.tcache_count=0`, see fob-secret-service's
/// main). Returns 1 when all three were accepted.
int fob_ss_tune_heap(void);

/// The 128-byte big-endian modulus of RFC 2409's second Oakley group.
extern const uint8_t fob_ss_oakley2_prime[128];

/// `base`^`exponent` mod the Oakley group 2 prime, with GMP's `mpz_powm_sec`,
/// written big-endian and left-padded to 128 bytes in `out`.
/// Returns -1 when `base` ≤ 1 or `base` ≥ p − 1 (a public key a peer must
/// not send), else 0. `base` and `exponent` are big-endian, any length.
int fob_ss_oakley2_powm(const uint8_t *base, size_t base_length, const uint8_t *exponent, size_t exponent_length,
                        uint8_t out[128]);

/// HKDF-SHA256 (RFC 5869) with no salt and no info, from Nettle.
void fob_ss_hkdf_sha256(const uint8_t *key_material, size_t key_material_length, uint8_t *out, size_t out_length);

/// AES-128-CBC from Nettle over whole blocks (`length` a multiple of 16);
/// `out` may equal `in`.
void fob_ss_aes128_cbc(int encrypt, const uint8_t key[16], const uint8_t iv[16], const uint8_t *in, size_t length,
                       uint8_t *out);

/// The kernel's user keyring (add_key(2), keyctl(2)), which holds the
/// locked-search index's key outside any process: adds (or replaces) the
/// "user" key `description` with `payload`; returns its id or -errno.
long fob_ss_key_add(const char *description, const uint8_t *payload, size_t length);
/// The id of the "user" key `description` in the user keyring, or -errno (-ENOKEY when none).
long fob_ss_key_search(const char *description);
/// Copies up to `capacity` bytes of key `id` to `out`; returns its whole length or -errno.
long fob_ss_key_read(long id, uint8_t *out, size_t capacity);
/// Makes key `id` expire `seconds` from now (0: never); 0 or -errno.
int fob_ss_key_set_timeout(long id, unsigned seconds);
#endif
