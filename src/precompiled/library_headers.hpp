// The library headers most of baton's files include, precompiled once per
// tree when BATON_PCH is on (the sanitizer tree: scripts/sanitized-tree.sh)
// and then read by every component's compile instead of being parsed again.
// Only headers from outside baton: a change to baton's own headers must not
// rebuild everything. The machine component does not use it: it is pure
// logic and must build without asio.
#pragma once

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <spdlog/spdlog.h>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>
