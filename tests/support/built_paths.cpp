// The build's paths, from definitions that tests/CMakeLists.txt gives this
// file alone (see built_paths.hpp).
#include "support/built_paths.hpp"

namespace baton::testing {

const char* baton_binary_path() { return BATON_BINARY_PATH; }
const char* test_worker_path() { return BATON_TEST_WORKER_PATH; }
const char* keeper_binary_path() { return BATON_KEEPER_BINARY_PATH; }
const char* source_root_path() { return BATON_SOURCE_ROOT; }

}  // namespace baton::testing
