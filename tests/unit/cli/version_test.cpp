// `baton version`: the version, then the commit the build came from. The
// first two words stay "baton VERSION" for scripts that parse them.
#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <regex>
#include <string>

#include "baton/cli.hpp"
#include "support/built_paths.hpp"

namespace baton {
namespace {

// "8fa2c5e", "8fa2c5e-dirty", "v0.1.0-3-g8fa2c5e" or "unknown".
const std::regex version_line_format(R"(baton [0-9]+\.[0-9]+\.[0-9]+ \(commit [A-Za-z0-9._+-]+\))");

TEST(version, names_the_version_and_the_commit) {
  const std::string line = version_line();
  EXPECT_TRUE(std::regex_match(line, version_line_format)) << line;
  EXPECT_EQ(line.rfind(std::string("baton ") + BATON_VERSION + " (commit ", 0), 0u) << line;
}

TEST(version, the_binary_prints_the_same_line) {
  if (::access(BATON_BINARY, X_OK) != 0) GTEST_SKIP() << BATON_BINARY << " is not built";
  for (const char* args : {" version", " --version"}) {
    FILE* p = ::popen((std::string(BATON_BINARY) + args).c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, p) != nullptr) out += buffer;
    EXPECT_EQ(::pclose(p), 0) << args;
    EXPECT_EQ(out, version_line() + "\n") << args;
  }
}

}  // namespace
}  // namespace baton
