// SQLite loaded at the first call of one of these functions (see CLoader.h):
// only commands that open a vault file load it, the agent among them.
#include "CLoader.h"
#include "shim.h"

#define FUNCTIONS(F, P) \
    F(int, sqlite3_backup_finish, (sqlite3_backup *p), (p)) \
    F(sqlite3_backup *, sqlite3_backup_init, (sqlite3 *d, const char *dn, sqlite3 *s, const char *sn), \
        (d, dn, s, sn)) \
    F(int, sqlite3_backup_step, (sqlite3_backup *p, int pages), (p, pages)) \
    F(int, sqlite3_bind_blob, (sqlite3_stmt *s, int i, const void *v, int n, void (*d)(void *)), \
        (s, i, v, n, d)) \
    F(int, sqlite3_bind_int64, (sqlite3_stmt *s, int i, sqlite3_int64 v), (s, i, v)) \
    F(int, sqlite3_bind_text, (sqlite3_stmt *s, int i, const char *v, int n, void (*d)(void *)), \
        (s, i, v, n, d)) \
    F(int, sqlite3_busy_timeout, (sqlite3 *db, int ms), (db, ms)) \
    F(int, sqlite3_changes, (sqlite3 *db), (db)) \
    F(int, sqlite3_clear_bindings, (sqlite3_stmt *s), (s)) \
    F(int, sqlite3_close, (sqlite3 *db), (db)) \
    F(int, sqlite3_close_v2, (sqlite3 *db), (db)) \
    F(const void *, sqlite3_column_blob, (sqlite3_stmt *s, int i), (s, i)) \
    F(int, sqlite3_column_bytes, (sqlite3_stmt *s, int i), (s, i)) \
    F(sqlite3_int64, sqlite3_column_int64, (sqlite3_stmt *s, int i), (s, i)) \
    F(const unsigned char *, sqlite3_column_text, (sqlite3_stmt *s, int i), (s, i)) \
    F(const char *, sqlite3_errmsg, (sqlite3 *db), (db)) \
    F(const char *, sqlite3_errstr, (int code), (code)) \
    F(int, sqlite3_exec, \
        (sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **), void *context, \
            char **error), \
        (db, sql, callback, context, error)) \
    F(int, sqlite3_extended_result_codes, (sqlite3 *db, int on), (db, on)) \
    F(int, sqlite3_finalize, (sqlite3_stmt *s), (s)) \
    F(int, sqlite3_get_autocommit, (sqlite3 *db), (db)) \
    F(sqlite3_int64, sqlite3_last_insert_rowid, (sqlite3 *db), (db)) \
    F(int, sqlite3_open, (const char *path, sqlite3 **db), (path, db)) \
    F(int, sqlite3_open_v2, (const char *path, sqlite3 **db, int flags, const char *vfs), \
        (path, db, flags, vfs)) \
    F(int, sqlite3_prepare_v2, \
        (sqlite3 *db, const char *sql, int n, sqlite3_stmt **s, const char **tail), (db, sql, n, s, tail)) \
    F(int, sqlite3_reset, (sqlite3_stmt *s), (s)) \
    F(int, sqlite3_sleep, (int ms), (ms)) \
    F(int, sqlite3_step, (sqlite3_stmt *s), (s)) \
    F(int, sqlite3_system_errno, (sqlite3 *db), (db))
#define VARIABLES(V)

FOB_LIBRARY_DEFINE("libsqlite3.so.0", FUNCTIONS, VARIABLES)
