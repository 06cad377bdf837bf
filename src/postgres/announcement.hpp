// The payloads baton's statements send with pg_notify on the table's channel:
// one JSON object per release, new term or probe, for any election that
// shares the table. Pure: parsed here, acted on by the store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace baton::postgres_detail {

struct announcement {
  enum class kind { released, acquired, probe };
  kind what = kind::released;
  std::string election;
  std::string holder;   ///< node id (released / acquired)
  std::string session;  ///< the sender's session nonce
  std::uint64_t token = 0;
};

/// nullopt for anything that is not one of baton's payloads (someone else
/// may NOTIFY on the channel); never throws.
std::optional<announcement> parse_announcement(const std::string& payload);

/// A probe's payload: a session checks that its own notifications reach it.
std::string probe_payload(const std::string& election, const std::string& session);

}  // namespace baton::postgres_detail
