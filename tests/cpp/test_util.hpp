// Helpers the C++ tests share, on top of tests/support/test_util.h.
#ifndef LANCE_TEST_UTIL_HPP
#define LANCE_TEST_UTIL_HPP

#include <cstring>
#include <vector>

#include "lance/lance.hpp"
#include "test_util.h"

// The code of the lance::Error that f() throws, or LANCE_OK when it does not throw.
template <typename F>
inline LanceErrorCode code_of(F&& f) {
    try {
        f();
    } catch (const lance::Error& e) {
        CHECK(std::strlen(e.what()) > 0);
        return e.code;
    }
    return LANCE_OK;
}

// The `id` column (the first projected column) of every row a scan yields.
inline std::vector<int64_t> scan_ids(lance::Scanner& scanner) {
    std::vector<int64_t> ids;
    while (auto batch = scanner.next()) {
        ArrowArray a;
        ArrowSchema s;
        batch->to_arrow(&a, &s);
        const ArrowArray* col = a.children[0];
        const int64_t* values = static_cast<const int64_t*>(col->buffers[1]);
        for (int64_t i = 0; i < col->length; i++) ids.push_back(values[col->offset + i]);
        a.release(&a);
        s.release(&s);
    }
    return ids;
}

#endif
