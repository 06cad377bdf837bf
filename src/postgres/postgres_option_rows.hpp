// The postgres: rows of the option table (store_kind::options).
#pragma once

#include <span>

#include "config_schema/option_spec.hpp"

namespace baton {

std::span<const option_spec> postgres_option_rows();

}  // namespace baton
