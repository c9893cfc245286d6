#ifndef MONARCH_CLIBUV_SHIM_H
#define MONARCH_CLIBUV_SHIM_H
// The libuv headers, as one module for Swift (Debian: libuv1-dev).
#include <uv.h>
#include <pthread.h>
#include <malloc.h>

// glibc declares pthread_setname_np only under _GNU_SOURCE; the prototype is stable.
extern int pthread_setname_np(pthread_t thread, const char *name);

/// Names the calling thread (at most 15 bytes are kept), for ps, top and debuggers.
static inline void monarch_name_current_thread(const char *name) {
    char truncated[16];
    size_t i = 0;
    for (; i < 15 && name[i] != '\0'; i++) truncated[i] = name[i];
    truncated[i] = '\0';
    (void)pthread_setname_np(pthread_self(), truncated);
}

/// Has glibc's allocator serve buffers of up to `mmap_threshold` bytes from its heap and keep up
/// to `trim_threshold` bytes of free heap before giving memory back (mallopt).
static inline void monarch_tune_allocator(int mmap_threshold, int trim_threshold) {
    (void)mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    (void)mallopt(M_TRIM_THRESHOLD, trim_threshold);
}
#endif
