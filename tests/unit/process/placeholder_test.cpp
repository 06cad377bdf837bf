#include <gtest/gtest.h>
// Placeholder until the suite lands.
TEST(placeholder_process, builds) { SUCCEED(); }
