#include <gtest/gtest.h>
// Placeholder until the suite lands.
TEST(placeholder_redis, builds) { SUCCEED(); }
