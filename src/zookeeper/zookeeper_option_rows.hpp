// The zookeeper: rows of the option table (store_kind::options).
#pragma once

#include <span>

#include "config/option_table.hpp"

namespace baton {

std::span<const option_spec> zookeeper_option_rows();

}  // namespace baton
