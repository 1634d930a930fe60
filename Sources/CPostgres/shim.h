#include <libpq-fe.h>
#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/resource.h>

/// Sets the calling thread's nice value (on Linux, nice is per thread): 0, or errno's value.
static inline int ledger_set_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice) == 0 ? 0 : errno;
}

/// The calling thread's kernel id.
static inline int ledger_thread_id(void) { return (int)syscall(SYS_gettid); }
