#ifndef MONARCH_BUNDLE_SHIM_H
#define MONARCH_BUNDLE_SHIM_H

/* openat2(2) for the bundle worker: glibc has no wrapper for it (Debian 12), so the shim makes
   the system call itself. */

/* Opens `path`, relative to the directory `dirfd`, with the open(2) `flags`, resolving it with
   RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS: the resolution never leaves `dirfd` — an absolute
   path or symbolic link, or a ".." (also inside a link's target) that would climb above
   `dirfd`, fails with EXDEV; a /proc-style "magic link" fails with ELOOP — while symbolic
   links that stay beneath `dirfd` are followed. Returns the new descriptor, or -1 with errno
   set; ENOSYS when the kernel (or the headers this was built with) has no openat2, EPERM when
   a seccomp filter forbids it. */
int monarch_open_beneath(int dirfd, const char *path, int flags);

/* The O_PATH open(2) flag (a descriptor that only names a file), which <fcntl.h> defines only
   under _GNU_SOURCE. */
int monarch_o_path(void);

#endif
