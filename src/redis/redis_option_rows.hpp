// The option rows of the Redis-based kinds' own sections (redis:, sentinel:,
// cluster:), as the one option table takes them (store_kind::options).
#pragma once

#include <span>

#include "config_schema/option_spec.hpp"

namespace baton::redis_detail {

std::span<const option_spec> redis_option_rows();
std::span<const option_spec> sentinel_option_rows();
std::span<const option_spec> cluster_option_rows();

}  // namespace baton::redis_detail
