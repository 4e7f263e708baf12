/* The ArrowSchema.flags bit these programs set, numbered as the Arrow C Data
 * Interface specification numbers it.  lance.h defines the specification's
 * structs but leaves the ARROW_FLAG_* names to programs (Apache Doris, for
 * one, declares them itself), so the tool, the tests and the other helpers
 * take the one they use from here. */
#ifndef LANCE_COMMON_ARROW_FLAGS_H
#define LANCE_COMMON_ARROW_FLAGS_H

#define ARROW_FLAG_NULLABLE 2

#endif
