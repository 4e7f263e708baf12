#define _POSIX_C_SOURCE 200809L
#include "cancel_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* The handler writes one byte to a pipe (write is async-signal-safe); the
 * watcher thread blocks reading it and cancels the token.  Stopping writes
 * another byte so the thread wakes and ends. */
enum { WAKE_SIGNAL = 's', WAKE_STOP = 'q' };

static int wake_fds[2] = {-1, -1};
static volatile sig_atomic_t signalled;
static LanceIndexBuildCancelToken* token;
static pthread_t watcher;
static struct sigaction previous_int, previous_term;
static int watching;

static void on_signal(int sig) {
    (void)sig;
    int saved = errno;
    signalled = 1;
    char byte = WAKE_SIGNAL;
    ssize_t ignored = write(wake_fds[1], &byte, 1); /* a full pipe already holds a wake-up */
    (void)ignored;
    errno = saved;
}

static void* watch(void* arg) {
    (void)arg;
    for (;;) {
        char byte = 0;
        ssize_t n = read(wake_fds[0], &byte, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n != 1 || byte == WAKE_STOP) return NULL;
        lance_index_build_cancel(token);
    }
}

static void close_pipe(void) {
    for (int i = 0; i < 2; i++) {
        if (wake_fds[i] >= 0) close(wake_fds[i]);
        wake_fds[i] = -1;
    }
}

const LanceIndexBuildCancelToken* cancel_signal_start(void) {
    if (watching) {
        errno = EBUSY;
        return NULL;
    }
    if (pipe(wake_fds) != 0) return NULL;
    /* The handler must never block on a full pipe. */
    fcntl(wake_fds[1], F_SETFL, fcntl(wake_fds[1], F_GETFL) | O_NONBLOCK);
    token = lance_index_build_cancel_token_new();
    if (!token) {
        close_pipe();
        errno = ENOMEM;
        return NULL;
    }
    int err = pthread_create(&watcher, NULL, watch, NULL);
    if (err != 0) {
        lance_index_build_cancel_token_free(token);
        token = NULL;
        close_pipe();
        errno = err;
        return NULL;
    }
    signalled = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &previous_int);
    sigaction(SIGTERM, &sa, &previous_term);
    watching = 1;
    return token;
}

int cancel_signal_stop(void) {
    if (!watching) return 0;
    sigaction(SIGINT, &previous_int, NULL);
    sigaction(SIGTERM, &previous_term, NULL);
    char byte = WAKE_STOP;
    while (write(wake_fds[1], &byte, 1) < 0 && (errno == EINTR || errno == EAGAIN)) {
    }
    pthread_join(watcher, NULL);
    close_pipe();
    lance_index_build_cancel_token_free(token);
    token = NULL;
    watching = 0;
    return signalled != 0;
}
