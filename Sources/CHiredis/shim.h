#ifndef MONARCH_CHIREDIS_SHIM_H
#define MONARCH_CHIREDIS_SHIM_H
// hiredis's synchronous and asynchronous APIs, as one module for Swift (Debian: libhiredis-dev).
#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#endif
