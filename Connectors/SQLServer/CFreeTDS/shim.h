#ifndef CFREETDS_SHIM_H
#define CFREETDS_SHIM_H
// FreeTDS db-lib (Debian: freetds-dev). The modulemap's header path is relative to it, so the
// real headers are included from here. Swift does not import db-lib's function-like macros
// (dbopen, DBSETLUSER, …): the connector calls the functions they expand to.
#include <sybfront.h>
#include <sybdb.h>
#endif
