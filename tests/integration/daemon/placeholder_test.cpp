#include <gtest/gtest.h>
// Placeholder until the suite lands.
TEST(placeholder_daemon_integration, builds) { SUCCEED(); }
