#include "CSecretService.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// The kernel's key retention service through its system calls (add_key(2),
// keyctl(2)): glibc has no wrappers and Swift cannot call syscall(2), which
// is variadic. Only "user" keys in the user keyring (KEY_SPEC_USER_KEYRING).
#define FOB_KEY_SPEC_USER_KEYRING (-4)
#define FOB_KEYCTL_SET_TIMEOUT 15
#define FOB_KEYCTL_READ 11
#define FOB_KEYCTL_SEARCH 10

long fob_ss_key_add(const char *description, const uint8_t *payload, size_t length) {
    long id = syscall(SYS_add_key, "user", description, payload, length, FOB_KEY_SPEC_USER_KEYRING);
    return id < 0 ? -errno : id;
}

long fob_ss_key_search(const char *description) {
    long id = syscall(SYS_keyctl, FOB_KEYCTL_SEARCH, FOB_KEY_SPEC_USER_KEYRING, "user", description, 0);
    return id < 0 ? -errno : id;
}

long fob_ss_key_read(long id, uint8_t *out, size_t capacity) {
    long length = syscall(SYS_keyctl, FOB_KEYCTL_READ, id, out, capacity);
    return length < 0 ? -errno : length;
}

int fob_ss_key_set_timeout(long id, unsigned seconds) {
    return syscall(SYS_keyctl, FOB_KEYCTL_SET_TIMEOUT, id, seconds) < 0 ? -errno : 0;
}
