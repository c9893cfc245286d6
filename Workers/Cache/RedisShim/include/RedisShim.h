#ifndef MONARCH_REDIS_SHIM_H
#define MONARCH_REDIS_SHIM_H
#include <hiredis/async.h>

/* hiredis ships its libuv adapter as static functions in a header (hiredis/adapters/libuv.h);
   RedisShim.c compiles it once and offers it to Swift as a plain call. The loop is passed as
   an untyped pointer so that Swift's libuv module and this one never disagree on uv_loop_t. */

/* Attaches `context` to the libuv loop `uv_loop` (a uv_loop_t *): hiredis then reads and
   writes its socket from that loop's poll callbacks. Returns REDIS_OK or REDIS_ERR. Call on
   the loop's thread, right after redisAsyncConnect. */
int monarch_redis_attach_libuv(redisAsyncContext *context, void *uv_loop);

#endif
