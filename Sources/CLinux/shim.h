#ifndef FOB_CLINUX_SHIM_H
#define FOB_CLINUX_SHIM_H
// Linux calls that Swift cannot import as they are: variadic functions
// (prctl) and GNU extensions the Glibc module leaves out (pipe2, accept4).
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

// GNU extensions, declared here rather than through _GNU_SOURCE, which
// would make these headers differ from the Glibc module's copies.
extern int pipe2(int fds[2], int flags);
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

// prctl is variadic, which Swift cannot call: one wrapper per use.
static inline int fob_disable_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

// A pipe whose ends are close-on-exec from the start (no window in which
// another thread's child could inherit them).
static inline int fob_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

// accept(2) with the new descriptor close-on-exec from the start.
static inline int fob_accept_cloexec(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_CLOEXEC);
}

// SO_PEERCRED: the uid and pid of the process at the other end of a Unix
// socket (struct ucred needs _GNU_SOURCE, which the Glibc module lacks).
// Returns 0, or -1 with errno set.
struct fob_ucred { int pid; unsigned int uid; unsigned int gid; };
static inline int fob_peer_credentials(int fd, unsigned int *uid, int *pid) {
    struct fob_ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    if (length != sizeof credentials) return -1;
    *uid = credentials.uid;
    *pid = credentials.pid;
    return 0;
}

// A Unix stream socket, close-on-exec from the start.
static inline int fob_unix_socket_cloexec(void) { return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); }

// A pidfd for the process at the other end of a Unix socket (SO_PEERPIDFD,
// Linux 6.5), which names that process and no later one given its pid; or,
// on an older kernel, pidfd_open(2) of the pid SO_PEERCRED gave (a syscall
// glibc 2.36 declares only under _GNU_SOURCE). Returns the descriptor
// (close-on-exec), or -1 with errno set.
#include <sys/syscall.h>
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
static inline int fob_peer_pidfd(int fd) {
    int pidfd = -1;
    socklen_t length = sizeof pidfd;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) == 0 && length == sizeof pidfd) return pidfd;
    return -1;
}
static inline int fob_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }
#endif
