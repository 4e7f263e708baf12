/* Reporting the library's last error from a program: the tool, the
 * examples and the benchmarks print it the same way. */
#ifndef LANCE_COMMON_DIE_H
#define LANCE_COMMON_DIE_H

#include "lance/lance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Prints "<program>: <what> failed (error <code>): <message>" on stderr for
 * this thread's last lance-c error, and returns its code.  <program> is the
 * name the program was started under. */
LanceErrorCode report_lance_error(const char* what);

/* report_lance_error(what), then exit(1). */
#ifdef __cplusplus
[[noreturn]]
#else
_Noreturn
#endif
void die(const char* what);

/* For a failure of the system rather than of the library: prints
 * "<program>: <what>: <strerror(errno)>" on stderr, then exit(1). */
#ifdef __cplusplus
[[noreturn]]
#else
_Noreturn
#endif
void die_errno(const char* what);

#ifdef __cplusplus
}
#endif

#endif
