#ifndef FOB_CLOADER_H
#define FOB_CLOADER_H
// Loading a C library at its first use instead of at start-up: CSQLite,
// CNcurses and CNettle define the functions Fob calls as hidden stand-ins
// that resolve the library's own function here once, so that a command
// which never touches the vault file, the terminal UI or a one-time code
// (`fob --version`, `fob get` through the agent) never maps those libraries
// nor pays the loader's binding of their symbols (Debian links SQLite with
// BIND_NOW: some 1,600 bindings at every start).

/// A library loaded at first use: its soname and, once loaded, its handle.
struct fob_library {
    /// The soname to `dlopen`, e.g. "libsqlite3.so.0" (the name the linker
    /// would have recorded as DT_NEEDED).
    const char *soname;
    /// Set once by `fob_library_symbols`, after every symbol it resolved.
    void *handle;
};

/// Resolves `count` symbols of `library` into `slots`, loading the library
/// the first time (`dlopen` with RTLD_NOW | RTLD_LOCAL, so its own symbols
/// are bound against itself, never against the program's stand-ins).
/// Thread-safe; every later call returns at once.
/// A library or a symbol that cannot be found ends the process with status
/// 1 and one line on standard error naming it (`PROGRAM: cannot load
/// SONAME: REASON`): the package depends on these libraries, so this is a
/// broken installation, and no caller could do without the function.
/// - Parameters:
///   - library: the library, its `handle` NULL until then.
///   - names: `count` symbol names.
///   - slots: `count` places for the addresses, in the order of `names`.
void fob_library_symbols(struct fob_library *library, const char *const *names, void **slots, int count);


// The stand-ins of one library, in the one C file that lists them:
//   #define FUNCTIONS(F, P) F(int, sqlite3_step, (sqlite3_stmt *s), (s)) ...
//                           P(delscreen, (SCREEN *s), (s))     (void ones)
//   #define VARIABLES(V) V(stdscr) ...     (or an empty V list)
//   FOB_LIBRARY_DEFINE("libsqlite3.so.0", FUNCTIONS, VARIABLES)
// defines each function, with the library's own prototype from its header
// (so a wrong one does not compile), hidden: it is never exported, so the
// library itself never binds to it. A variable's address is
// FOB_LIBRARY_VARIABLE(name), for an accessor written beside the list.
#define FOB_LIBRARY_INDEX(ret, name, params, args) fob_index_##name,
#define FOB_LIBRARY_NAME(ret, name, params, args) #name,
#define FOB_LIBRARY_VOID_INDEX(name, params, args) fob_index_##name,
#define FOB_LIBRARY_VOID_NAME(name, params, args) #name,
#define FOB_LIBRARY_VARIABLE_INDEX(name) fob_index_##name,
#define FOB_LIBRARY_VARIABLE_NAME(name) #name,
#define FOB_LIBRARY_LOAD() \
    fob_library_symbols(&fob_this_library, fob_symbol_names, fob_symbol_slots, fob_symbol_count)
#define FOB_LIBRARY_STANDIN(ret, name, params, args) \
    __attribute__((visibility("hidden"))) ret name params { \
        FOB_LIBRARY_LOAD(); \
        return ((__typeof__(&name))fob_symbol_slots[fob_index_##name]) args; \
    }
#define FOB_LIBRARY_VOID_STANDIN(name, params, args) \
    __attribute__((visibility("hidden"))) void name params { \
        FOB_LIBRARY_LOAD(); \
        ((__typeof__(&name))fob_symbol_slots[fob_index_##name]) args; \
    }
#define FOB_LIBRARY_DEFINE(soname, FUNCTIONS, VARIABLES) \
    enum { \
        FUNCTIONS(FOB_LIBRARY_INDEX, FOB_LIBRARY_VOID_INDEX) VARIABLES(FOB_LIBRARY_VARIABLE_INDEX) \
        fob_symbol_count \
    }; \
    static const char *const fob_symbol_names[] = { \
        FUNCTIONS(FOB_LIBRARY_NAME, FOB_LIBRARY_VOID_NAME) VARIABLES(FOB_LIBRARY_VARIABLE_NAME)}; \
    static void *fob_symbol_slots[fob_symbol_count]; \
    static struct fob_library fob_this_library = {soname, 0}; \
    FUNCTIONS(FOB_LIBRARY_STANDIN, FOB_LIBRARY_VOID_STANDIN)
/// The address of the library's variable `name` (loading the library first).
#define FOB_LIBRARY_VARIABLE(name) (FOB_LIBRARY_LOAD(), fob_symbol_slots[fob_index_##name])

#endif
