/* The version has one source, Cargo.toml; CMake passes it here as
 * LANCE_C_CARGO_VERSION.  lance.h's macros (literals, as a C header needs)
 * and lance_version() (the library's CARGO_PKG_VERSION) must both say it. */
#include <stdio.h>
#include <string.h>

#include "lance/lance.h"

int main(void) {
    char from_parts[64];
    snprintf(from_parts, sizeof from_parts, "%d.%d.%d", LANCE_C_VERSION_MAJOR, LANCE_C_VERSION_MINOR,
             LANCE_C_VERSION_PATCH);
    const char* library = lance_version();
    int failures = 0;
    if (strcmp(LANCE_C_VERSION_STRING, LANCE_C_CARGO_VERSION) != 0) {
        fprintf(stderr, "lance.h: LANCE_C_VERSION_STRING is %s, Cargo.toml says %s\n", LANCE_C_VERSION_STRING,
                LANCE_C_CARGO_VERSION);
        failures++;
    }
    if (strcmp(from_parts, LANCE_C_CARGO_VERSION) != 0) {
        fprintf(stderr, "lance.h: LANCE_C_VERSION_MAJOR.MINOR.PATCH is %s, Cargo.toml says %s\n", from_parts,
                LANCE_C_CARGO_VERSION);
        failures++;
    }
    if (library == NULL || strcmp(library, LANCE_C_CARGO_VERSION) != 0) {
        fprintf(stderr, "lance_version() is %s, Cargo.toml says %s (a library built from another Cargo.toml?)\n",
                library ? library : "NULL", LANCE_C_CARGO_VERSION);
        failures++;
    }
    if (failures == 0) printf("version %s: Cargo.toml, lance.h and lance_version() agree\n", library);
    return failures == 0 ? 0 : 1;
}
