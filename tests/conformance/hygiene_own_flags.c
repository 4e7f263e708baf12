/* A program that names the Arrow C Data Interface's flag constants itself,
 * as Apache Doris's backend does, and includes one lance-c header (given as
 * HYGIENE_HEADER).  header_hygiene.sh compiles it as C and as C++, with the
 * constants declared before the header (HYGIENE_FLAGS_FIRST) and after it.
 * A header that declares any of these names breaks the first order; one
 * that defines any of them as a macro breaks the second. */
#include <stdint.h>

#ifdef __cplusplus
#define HYGIENE_CONSTANT constexpr
#else
#define HYGIENE_CONSTANT static const
#endif

#ifndef HYGIENE_FLAGS_FIRST
#include HYGIENE_HEADER
#endif

HYGIENE_CONSTANT int64_t ARROW_FLAG_DICTIONARY_ORDERED = 1;
HYGIENE_CONSTANT int64_t ARROW_FLAG_NULLABLE = 2;
HYGIENE_CONSTANT int64_t ARROW_FLAG_MAP_KEYS_SORTED = 4;

#ifdef HYGIENE_FLAGS_FIRST
#include HYGIENE_HEADER
#endif

/* The program's constants, used with the header's struct. */
int64_t hygiene_flags(struct ArrowSchema* schema);
int64_t hygiene_flags(struct ArrowSchema* schema) {
    schema->flags = ARROW_FLAG_DICTIONARY_ORDERED | ARROW_FLAG_NULLABLE | ARROW_FLAG_MAP_KEYS_SORTED;
    return schema->flags;
}
