// Where the build put the programs the tests run. The paths live in one
// translation unit (built_paths.cpp, compiled with them as definitions) rather
// than on every test's command line: a test file then compiles the same in
// any checkout, and a compiler cache shared between checkouts reuses it.
#pragma once

namespace baton::testing {

const char* baton_binary_path();   ///< the baton daemon
const char* test_worker_path();    ///< tests/worker/test_worker.cpp
const char* keeper_binary_path();  ///< baton-keeper, the parked keeper
const char* source_root_path();    ///< the top of the checkout (README.md is there)

}  // namespace baton::testing

#define BATON_BINARY (::baton::testing::baton_binary_path())
#define BATON_TEST_WORKER (::baton::testing::test_worker_path())
#define BATON_KEEPER_BINARY (::baton::testing::keeper_binary_path())
