/* The load-time CPU check of boundary/cpu.rs, in C because it must run on the
 * CPUs it rejects: every Rust function of a library compiled for
 * x86-64-v3 may hold AVX instructions (even its 128-bit moves are
 * VEX-encoded), this file is compiled for the x86-64 baseline (build.rs).
 *
 * build.rs defines LANCE_C_ASSUMES_<FEATURE> for each feature rustc was
 * told it may use (CARGO_CFG_TARGET_FEATURE).  The constructor runs before
 * the library's other constructors (priority 101, the first left to
 * programs; the linker puts prioritized .init_array entries first): on a
 * CPU that lacks one of them it says which on stderr and aborts, rather
 * than let a dependency's constructor or a later call die of an illegal
 * instruction. */
#include <cpuid.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { LEAF1_ECX, LEAF7_EBX, EXT1_ECX };

typedef struct {
    const char* name;
    int assumed;
    int reg;
    int bit;
    int needs_avx_state; /* also needs the OS to save the AVX registers */
} Feature;

#ifndef LANCE_C_ASSUMES_sse3
#define LANCE_C_ASSUMES_sse3 0
#endif
#ifndef LANCE_C_ASSUMES_ssse3
#define LANCE_C_ASSUMES_ssse3 0
#endif
#ifndef LANCE_C_ASSUMES_sse4_1
#define LANCE_C_ASSUMES_sse4_1 0
#endif
#ifndef LANCE_C_ASSUMES_sse4_2
#define LANCE_C_ASSUMES_sse4_2 0
#endif
#ifndef LANCE_C_ASSUMES_popcnt
#define LANCE_C_ASSUMES_popcnt 0
#endif
#ifndef LANCE_C_ASSUMES_cmpxchg16b
#define LANCE_C_ASSUMES_cmpxchg16b 0
#endif
#ifndef LANCE_C_ASSUMES_movbe
#define LANCE_C_ASSUMES_movbe 0
#endif
#ifndef LANCE_C_ASSUMES_xsave
#define LANCE_C_ASSUMES_xsave 0
#endif
#ifndef LANCE_C_ASSUMES_avx
#define LANCE_C_ASSUMES_avx 0
#endif
#ifndef LANCE_C_ASSUMES_f16c
#define LANCE_C_ASSUMES_f16c 0
#endif
#ifndef LANCE_C_ASSUMES_fma
#define LANCE_C_ASSUMES_fma 0
#endif
#ifndef LANCE_C_ASSUMES_avx2
#define LANCE_C_ASSUMES_avx2 0
#endif
#ifndef LANCE_C_ASSUMES_bmi1
#define LANCE_C_ASSUMES_bmi1 0
#endif
#ifndef LANCE_C_ASSUMES_bmi2
#define LANCE_C_ASSUMES_bmi2 0
#endif
#ifndef LANCE_C_ASSUMES_lzcnt
#define LANCE_C_ASSUMES_lzcnt 0
#endif
#ifndef LANCE_C_ASSUMES_avx512f
#define LANCE_C_ASSUMES_avx512f 0
#endif

static const Feature FEATURES[] = {
    {"sse3", LANCE_C_ASSUMES_sse3, LEAF1_ECX, 0, 0},      {"ssse3", LANCE_C_ASSUMES_ssse3, LEAF1_ECX, 9, 0},
    {"sse4.1", LANCE_C_ASSUMES_sse4_1, LEAF1_ECX, 19, 0}, {"sse4.2", LANCE_C_ASSUMES_sse4_2, LEAF1_ECX, 20, 0},
    {"popcnt", LANCE_C_ASSUMES_popcnt, LEAF1_ECX, 23, 0}, {"cmpxchg16b", LANCE_C_ASSUMES_cmpxchg16b, LEAF1_ECX, 13, 0},
    {"movbe", LANCE_C_ASSUMES_movbe, LEAF1_ECX, 22, 0},   {"xsave", LANCE_C_ASSUMES_xsave, LEAF1_ECX, 26, 0},
    {"avx", LANCE_C_ASSUMES_avx, LEAF1_ECX, 28, 1},       {"f16c", LANCE_C_ASSUMES_f16c, LEAF1_ECX, 29, 1},
    {"fma", LANCE_C_ASSUMES_fma, LEAF1_ECX, 12, 1},       {"avx2", LANCE_C_ASSUMES_avx2, LEAF7_EBX, 5, 1},
    {"bmi1", LANCE_C_ASSUMES_bmi1, LEAF7_EBX, 3, 0},      {"bmi2", LANCE_C_ASSUMES_bmi2, LEAF7_EBX, 8, 0},
    {"lzcnt", LANCE_C_ASSUMES_lzcnt, EXT1_ECX, 5, 0},     {"avx512f", LANCE_C_ASSUMES_avx512f, LEAF7_EBX, 16, 2},
};

static char missing[160];
static char message[400];
static int probed;

static void probe(void) {
    unsigned a, b, c, d;
    unsigned regs[3] = {0, 0, 0};
    unsigned max = __get_cpuid_max(0, NULL);
    if (__get_cpuid(1, &a, &b, &c, &d)) regs[LEAF1_ECX] = c;
    if (max >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) regs[LEAF7_EBX] = b;
    if (__get_cpuid_max(0x80000000u, NULL) >= 0x80000001u && __get_cpuid(0x80000001u, &a, &b, &c, &d))
        regs[EXT1_ECX] = c;
    /* The AVX (and AVX-512) register state must be enabled by the OS:
     * XCR0, read with XGETBV once CPUID says the OS uses XSAVE. */
    unsigned xcr0 = 0;
    if (regs[LEAF1_ECX] & (1u << 27)) __asm__ volatile("xgetbv" : "=a"(xcr0), "=d"(d) : "c"(0));
    int state[3] = {1, (xcr0 & 0x6u) == 0x6u, (xcr0 & 0xe6u) == 0xe6u};
    for (size_t i = 0; i < sizeof FEATURES / sizeof FEATURES[0]; i++) {
        const Feature* f = &FEATURES[i];
        if (!f->assumed || ((regs[f->reg] >> f->bit) & 1u && state[f->needs_avx_state])) continue;
        if (missing[0]) strncat(missing, ", ", sizeof missing - strlen(missing) - 1);
        strncat(missing, f->name, sizeof missing - strlen(missing) - 1);
    }
    if (missing[0]) {
        strcpy(message, "this lance-c library was compiled for CPU features this CPU lacks (");
        strcat(message, missing);
        strcat(message, "); rebuild it with -DLANCE_C_TARGET_CPU=x86-64 to run here");
    }
    probed = 1;
}

/* Why this library cannot run on this CPU, naming the features it was
 * compiled for and the CPU lacks; NULL when it can run. */
__attribute__((visibility("hidden"))) const char* lance_c_cpu_refusal(void) {
    if (!probed) probe();
    return message[0] ? message : NULL;
}

static void say(const char* s) {
    ssize_t ignored = write(2, s, strlen(s));
    (void)ignored;
}

__attribute__((constructor(101))) static void check_at_load(void) {
    const char* refusal = lance_c_cpu_refusal();
    if (!refusal) return;
    say("lance-c: ");
    say(refusal);
    say("\n");
    abort();
}
