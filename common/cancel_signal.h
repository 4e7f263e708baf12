/* SIGINT and SIGTERM as a cancel request for a running index build: what a
 * command-line program wants from Ctrl-C or a scheduler's kill. */
#ifndef LANCE_COMMON_CANCEL_SIGNAL_H
#define LANCE_COMMON_CANCEL_SIGNAL_H

#include "lance/lance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Starts watching: a SIGINT or SIGTERM from now on cancels the returned
 * token (give it to the build), through a thread of this module, since a
 * signal handler may not call the library.  One watch at a time per
 * process.  Returns the token, owned by the module until
 * cancel_signal_stop(); NULL (errno set, nothing installed) on failure. */
const LanceIndexBuildCancelToken* cancel_signal_start(void);

/* Stops watching: restores the previous handlers, joins the thread and
 * frees the token (the build that used it must have returned).  Returns 1
 * when a signal arrived during the watch, else 0.  A no-op returning 0
 * when no watch runs. */
int cancel_signal_stop(void);

#ifdef __cplusplus
}
#endif

#endif
