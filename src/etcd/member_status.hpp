// One member's /v3/maintenance/status answer, as check-store reports it
// per endpoint, without I/O: its version, whether it leads raft (its own id
// is the leader's) or follows, raft term and index, and the time the call
// took.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "baton/lease_store.hpp"
#include "baton/check_report.hpp"

namespace baton::etcd_detail {

struct member_status {
  std::string version;
  /// Member ids are uint64, as decimal strings ("" = not said; "0" = none).
  std::string member_id;
  std::string leader;
  std::int64_t raft_term = 0;
  std::int64_t raft_index = 0;
};

/// A member id as etcdctl prints it (`8e9e05c52164694d`: lowercase hex,
/// no leading zeros), from the decimal the JSON gateway says. "" (not
/// said) and "0" (none) come back unchanged, and so does text that is not
/// a uint64, rather than a number it does not hold.
std::string member_id_text(std::string_view decimal);

/// Throws std::runtime_error naming what is wrong with the answer.
member_status read_member_status(const nlohmann::json& answer);

/// The "endpoint" line of the member at `url`: ok with its version, role,
/// raft term and index and latency; a hazard when it could not be reached
/// (`error`; the store moves on to the next endpoint), when it knows no
/// leader (it cannot serve), or when the call took more than a tenth of
/// the ttl.
check_line endpoint_line(std::string_view url, const store_error& error,
                         const nlohmann::json& answer, std::chrono::nanoseconds took,
                         milliseconds ttl);

}  // namespace baton::etcd_detail
