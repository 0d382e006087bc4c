#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
// The modulemap's header path is relative to it, so the real header is included from here.
#include <libpq-fe.h>
#endif
