// Rows of the lease statements (lease_sql.hpp) into the port's answers. Pure,
// so every malformed row has a unit test: a row of the wrong shape is an
// unexpected_reply with a detail that says what was wrong, never a crash.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baton/lease_store.hpp"

namespace baton::postgres_detail {

using result_rows = std::vector<std::vector<std::optional<std::string>>>;

struct parsed_acquire {
  store_error error;  ///< set when the rows had an unexpected shape
  acquire_answer answer;
  bool reset = false;    ///< this statement found the reset (and set the hold-back)
  bool missing = false;  ///< ... because the election's row was missing
  std::string epoch;     ///< the server epoch the row is now written under
};

parsed_acquire parse_acquire_rows(const result_rows& rows);

}  // namespace baton::postgres_detail
