// The `stopped` command's checks; see ack_command.hpp.
#include "ack_command.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace baton {

std::vector<unsigned> effective_allowed_uids(const std::vector<unsigned>& configured,
                                             unsigned own_uid) {
  if (!configured.empty()) return configured;
  if (own_uid == 0) return {0};
  return {own_uid, 0};
}

void check_peer_uid(const std::vector<unsigned>& allowed, uid_t uid, std::string_view cmd) {
  const bool known = uid != static_cast<uid_t>(-1);
  if (known && std::find(allowed.begin(), allowed.end(), static_cast<unsigned>(uid)) != allowed.end())
    return;
  throw std::runtime_error("permission denied: uid " +
                           (known ? std::to_string(uid) : std::string("unknown")) +
                           " may not send " + std::string(cmd));
}

std::optional<std::uint64_t> ack_token(const nlohmann::json& request) {
  const auto it = request.find("token");
  if (it == request.end() || it->is_null()) return std::nullopt;
  if (it->is_number_unsigned()) return it->get<std::uint64_t>();
  if (it->is_number_integer() && it->get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(it->get<std::int64_t>());
  throw std::runtime_error("\"token\" must be the term's fencing token, a non-negative integer");
}

}  // namespace baton
