#include <gtest/gtest.h>
// Placeholder until the suite lands.
TEST(placeholder_socket, builds) { SUCCEED(); }
