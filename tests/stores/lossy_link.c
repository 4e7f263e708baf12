/* lossy_link: a test host's network link that loses and delays what the host
 * sends, for tests/stores/test_faults.sh (the kernel of the CI machine has
 * no sch_netem, so `tc qdisc ... netem` is not available there).
 *
 *   lossy_link HOST_NETNS SWITCH_NETNS SWITCH_IFNAME LOSS_PERCENT DELAY_MS SEED
 *
 * Creates two TAP devices: "eth0" in network namespace HOST_NETNS (the host's
 * interface; the caller gives it its address) and SWITCH_IFNAME in
 * SWITCH_NETNS (the caller enslaves it to the switch's bridge), each by name
 * under /run/netns, then prints "ready" and forwards Ethernet frames between
 * them until SIGTERM or SIGINT:
 *   - host -> switch (the host's uplink): each frame is dropped with
 *     probability LOSS_PERCENT/100 (0-100, decimals allowed), drawn from a
 *     generator seeded with SEED, and the others are delivered DELAY_MS
 *     milliseconds after they were sent, in order (a queue of 4096 frames;
 *     frames arriving at a full queue are dropped and counted);
 *   - switch -> host: delivered at once.
 * So TCP over the link meets real loss and delay, as with
 * `tc qdisc add dev eth0 root netem loss L% delay D ms` on the host.  The
 * devices disappear when the process exits.  On exit it prints
 * {"sent": N, "lost": L, "overflow": O, "delivered_to_host": H} on stdout.
 * Needs root.  Exit 0 after a signal, 1 on a system error, 2 on bad arguments. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define QUEUE_FRAMES 4096
#define FRAME_MAX 2048

typedef struct {
    int64_t due_ns;
    uint16_t len;
    unsigned char data[FRAME_MAX];
} Frame;

static volatile sig_atomic_t stop;
static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* xorshift64*: a small generator whose sequence the seed fixes. */
static uint64_t rng_state;
static double next_unit(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/* A TAP device named `name` in the network namespace /run/netns/`netns`. */
static int tap_in(const char* netns, const char* name) {
    char path[4096];
    snprintf(path, sizeof path, "/run/netns/%s", netns);
    int nsfd = open(path, O_RDONLY | O_CLOEXEC);
    if (nsfd < 0 || setns(nsfd, CLONE_NEWNET) != 0) {
        fprintf(stderr, "lossy_link: entering %s: %s\n", path, strerror(errno));
        return -1;
    }
    close(nsfd);
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "lossy_link: /dev/net/tun: %s\n", strerror(errno));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
        fprintf(stderr, "lossy_link: creating TAP %s in %s: %s\n", name, netns, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int number(const char* text, double lo, double hi, double* out) {
    char* end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || v < lo || v > hi) {
        fprintf(stderr, "lossy_link: \"%s\" is not a number in [%g, %g]\n", text, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char** argv) {
    double loss, delay_ms, seed;
    if (argc != 7 || number(argv[4], 0, 100, &loss) || number(argv[5], 0, 60000, &delay_ms) ||
        number(argv[6], 0, 9007199254740992.0, &seed)) {
        fprintf(stderr, "usage: lossy_link HOST_NETNS SWITCH_NETNS SWITCH_IFNAME LOSS_PERCENT DELAY_MS SEED\n");
        return 2;
    }
    rng_state = (uint64_t)seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL;
    if (rng_state == 0) rng_state = 1;
    int host = tap_in(argv[1], "eth0");
    if (host < 0) return 1;
    int sw = tap_in(argv[2], argv[3]);
    if (sw < 0) return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    Frame* queue = calloc(QUEUE_FRAMES, sizeof *queue);
    if (!queue) {
        fprintf(stderr, "lossy_link: out of memory\n");
        return 1;
    }
    size_t head = 0, count = 0;
    unsigned long long sent = 0, lost = 0, overflow = 0, down = 0;
    const int64_t delay_ns = (int64_t)(delay_ms * 1e6);
    const double p = loss / 100.0;
    printf("ready\n");
    fflush(stdout);

    unsigned char buf[FRAME_MAX];
    while (!stop) {
        int64_t now = now_ns();
        /* Deliver what is due. */
        while (count > 0 && queue[head].due_ns <= now) {
            if (write(sw, queue[head].data, queue[head].len) < 0 && errno != EAGAIN && errno != EIO) {
                fprintf(stderr, "lossy_link: write to %s: %s\n", argv[3], strerror(errno));
                return 1;
            }
            head = (head + 1) % QUEUE_FRAMES;
            count--;
        }
        int timeout_ms = -1;
        if (count > 0) {
            int64_t wait = queue[head].due_ns - now;
            timeout_ms = (int)((wait + 999999) / 1000000);
        }
        struct pollfd fds[2] = {{host, POLLIN, 0}, {sw, POLLIN, 0}};
        int n = poll(fds, 2, timeout_ms);
        if (n < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "lossy_link: poll: %s\n", strerror(errno));
            return 1;
        }
        if (fds[0].revents & POLLIN) {
            for (;;) {
                ssize_t len = read(host, buf, sizeof buf);
                if (len <= 0) break;
                sent++;
                if (p > 0 && next_unit() < p) {
                    lost++;
                    continue;
                }
                if (count == QUEUE_FRAMES) {
                    overflow++;
                    continue;
                }
                Frame* f = &queue[(head + count) % QUEUE_FRAMES];
                f->due_ns = now_ns() + delay_ns;
                f->len = (uint16_t)len;
                memcpy(f->data, buf, (size_t)len);
                count++;
            }
        }
        if (fds[1].revents & POLLIN) {
            for (;;) {
                ssize_t len = read(sw, buf, sizeof buf);
                if (len <= 0) break;
                if (write(host, buf, (size_t)len) >= 0) down++;
            }
        }
    }
    printf("{\"sent\": %llu, \"lost\": %llu, \"overflow\": %llu, \"delivered_to_host\": %llu}\n", sent, lost, overflow,
           down);
    free(queue);
    return 0;
}
