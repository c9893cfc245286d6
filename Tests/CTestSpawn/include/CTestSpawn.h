#ifndef MONARCH_TEST_SPAWN_H
#define MONARCH_TEST_SPAWN_H

/* What the tests' posix_spawn helper (TestOrigins/ChildProcessSpawn.swift) needs from glibc
   that <unistd.h> and <spawn.h> declare only under _GNU_SOURCE, which Swift's Glibc module is
   not built with. */

#include <spawn.h>

/* pipe2(2) with O_CLOEXEC: `ends[0]` reads, `ends[1]` writes, both close-on-exec from the
   start (no window in which another thread's spawn inherits them). 0, or -1 with errno set. */
int monarch_test_pipe_cloexec(int ends[2]);

/* posix_spawn_file_actions_addclosefrom_np(3) (glibc 2.34): the child closes every
   descriptor from `from` up. 0, or an error number. */
int monarch_test_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int from);

#endif
