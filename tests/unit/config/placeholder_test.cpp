#include <gtest/gtest.h>
// Placeholder until the suite lands.
TEST(placeholder_config, builds) { SUCCEED(); }
