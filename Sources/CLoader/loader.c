#include "CLoader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern char *program_invocation_short_name;

// One load at a time; a library's handle says it was loaded.
static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *soname, const char *reason) {
    // No stdio: this may run with a terminal in ncurses' mode or under a lock.
    const char *parts[] = {program_invocation_short_name, ": cannot load ", soname, ": ", reason, "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        const char *text = parts[i] ? parts[i] : "?";
        size_t length = strlen(text);
        while (length > 0) {
            ssize_t n = write(STDERR_FILENO, text, length);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            text += n;
            length -= (size_t)n;
        }
    }
    _exit(1);
}

void fob_library_symbols(struct fob_library *library, const char *const *names, void **slots, int count) {
    if (__atomic_load_n(&library->handle, __ATOMIC_ACQUIRE) != NULL) return;
    pthread_mutex_lock(&loading);
    if (library->handle == NULL) {
        void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) fail(library->soname, dlerror());
        for (int i = 0; i < count; i++) {
            slots[i] = dlsym(handle, names[i]);
            if (slots[i] == NULL) fail(library->soname, dlerror());
        }
        __atomic_store_n(&library->handle, handle, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&loading);
}
