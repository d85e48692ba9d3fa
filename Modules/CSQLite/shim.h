// The system's SQLite (libsqlite3-dev on Debian; the SDK's on Apple platforms).
#include <sqlite3.h>

/// Turns off SQLite's memory statistics (`SQLITE_CONFIG_MEMSTATUS`): every allocation SQLite makes
/// otherwise takes one mutex shared by every connection of the process. Only before SQLite is first
/// used; later it is refused (SQLITE_MISUSE) and nothing changes.
static inline int onboarding_sqlite3_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
