#include "announcement.hpp"

#include <nlohmann/json.hpp>

namespace baton::postgres_detail {

std::optional<announcement> parse_announcement(const std::string& payload) {
  const auto j = nlohmann::json::parse(payload, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  const auto text = [&j](const char* key) -> std::optional<std::string> {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  const auto event = text("event");
  const auto election = text("election");
  const auto session = text("session");
  if (!event || !election || !session) return std::nullopt;
  announcement a;
  a.election = *election;
  a.session = *session;
  if (*event == "probe") {
    a.what = announcement::kind::probe;
    return a;
  }
  if (*event == "released") {
    a.what = announcement::kind::released;
  } else if (*event == "acquired") {
    a.what = announcement::kind::acquired;
  } else {
    return std::nullopt;
  }
  const auto holder = text("holder");
  const auto token = j.find("token");
  if (!holder || token == j.end() || !token->is_number_integer()) return std::nullopt;
  a.holder = *holder;
  const auto value = token->get<std::int64_t>();
  if (value < 0) return std::nullopt;
  a.token = static_cast<std::uint64_t>(value);
  return a;
}

std::string probe_payload(const std::string& election, const std::string& session) {
  return nlohmann::json{{"event", "probe"}, {"election", election}, {"session", session}}.dump();
}

}  // namespace baton::postgres_detail
