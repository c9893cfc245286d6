#include "RedisShim.h"
#include <hiredis/adapters/libuv.h>

int monarch_redis_attach_libuv(redisAsyncContext *context, void *uv_loop) {
    return redisLibuvAttach(context, (uv_loop_t *)uv_loop);
}
