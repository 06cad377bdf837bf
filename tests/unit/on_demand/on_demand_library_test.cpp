// A library opened on first use: a missing one is an error naming the
// package to install, never a crash; a present one gives its functions; a
// function it does not have ends the process with the reason (a bug of
// ours, not something to call through a null pointer).
#include "on_demand/on_demand_library.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace baton {
namespace {

TEST(on_demand_library, a_missing_library_is_an_error_naming_its_package) {
  const on_demand_library missing("libbaton-no-such-library.so.9", "libbaton-none9", "nothing");
  const auto error = missing.load_error();
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("libbaton-no-such-library.so.9"), std::string::npos) << *error;
  EXPECT_NE(error->find("apt-get install libbaton-none9"), std::string::npos) << *error;
  // Asked again: the same answer, without trying again.
  EXPECT_EQ(missing.load_error(), error);
}

TEST(on_demand_library, a_present_library_gives_its_functions) {
  const on_demand_library libc("libc.so.6", "libc6", "libc");
  ASSERT_FALSE(libc.load_error().has_value()) << *libc.load_error();
  const auto length = real_function(libc, &std::strlen, "strlen");
  EXPECT_EQ(length("baton"), 5u);
}

TEST(on_demand_library, a_function_it_lacks_ends_the_process_with_the_reason) {
  const on_demand_library libc("libc.so.6", "libc6", "libc");
  EXPECT_DEATH(libc.function("baton_no_such_function"),
               "baton: libc: baton_no_such_function: no such function in libc.so.6");
}

TEST(on_demand_library, a_function_of_a_missing_library_ends_the_process_with_why) {
  const on_demand_library missing("libbaton-no-such-library.so.9", "libbaton-none9", "nothing");
  EXPECT_DEATH(missing.function("anything"), "apt-get install libbaton-none9");
}

// The variable is for the library's load-time constructors only: the app and
// hooks inherit the daemon's environment and must not see it, and a value
// the user set stays as it was.
TEST(on_demand_library, a_load_time_variable_is_gone_after_opening) {
  ::unsetenv("BATON_TEST_LOAD_TIME");
  const on_demand_library libc("libc.so.6", "libc6", "libc",
                               {.name = "BATON_TEST_LOAD_TIME", .value = "1"});
  ASSERT_FALSE(libc.load_error().has_value());
  EXPECT_EQ(::getenv("BATON_TEST_LOAD_TIME"), nullptr);
}

TEST(on_demand_library, a_load_time_variable_the_user_set_is_kept) {
  ::setenv("BATON_TEST_LOAD_TIME", "0", 1);
  const on_demand_library libc("libc.so.6", "libc6", "libc",
                               {.name = "BATON_TEST_LOAD_TIME", .value = "1"});
  ASSERT_FALSE(libc.load_error().has_value());
  ASSERT_NE(::getenv("BATON_TEST_LOAD_TIME"), nullptr);
  EXPECT_EQ(std::string(::getenv("BATON_TEST_LOAD_TIME")), "0");
  ::unsetenv("BATON_TEST_LOAD_TIME");
}

}  // namespace
}  // namespace baton
