#define _GNU_SOURCE
#include "BundleShim.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define MONARCH_HAVE_OPENAT2_H 1
#endif
#endif

int monarch_open_beneath(int dirfd, const char *path, int flags) {
#if defined(MONARCH_HAVE_OPENAT2_H) && defined(SYS_openat2)
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(unsigned int)flags;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    long fd;
    do {
        fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    } while (fd < 0 && errno == EINTR);
    return (int)fd;
#else
    (void)dirfd;
    (void)path;
    (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

int monarch_o_path(void) {
    return O_PATH;
}
