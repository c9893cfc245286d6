#define _GNU_SOURCE
#include "CTestSpawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

int monarch_test_pipe_cloexec(int ends[2]) {
    return pipe2(ends, O_CLOEXEC);
}

int monarch_test_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}
