// The library headers most test files include, precompiled once for all test
// targets when BATON_PCH is on (the sanitizer tree); see
// src/precompiled/library_headers.hpp. The tests compile with flags of their
// own (-O0), so they cannot reuse the components' precompiled header.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>
