// The socket command `stopped`: a client acknowledges that its app has
// stopped for a term, {"cmd":"stopped","token":N}. Who may send it (the peer
// uid allow list) and how the request is read are here, as pure functions, so
// they are unit-tested without a socket; the driver hands the result to the
// stop gate.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace baton {

/// The uids that may send state-changing commands: `configured`
/// (socket.allowed_uids), or `own_uid` and 0 (root) when it is empty.
std::vector<unsigned> effective_allowed_uids(const std::vector<unsigned>& configured,
                                             unsigned own_uid);

/// Throws std::runtime_error("permission denied: uid U may not send CMD")
/// unless `uid` is in `allowed`. A peer whose uid is unknown ((uid_t)-1) is
/// never allowed.
void check_peer_uid(const std::vector<unsigned>& allowed, uid_t uid, std::string_view cmd);

/// The "token" of a `stopped` request: nullopt when absent or null (the stop
/// under way); throws std::runtime_error when it is not a non-negative
/// integer.
std::optional<std::uint64_t> ack_token(const nlohmann::json& request);

}  // namespace baton
