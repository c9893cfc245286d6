#include "CurlShim.h"
