#include "lease_answers.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include <nlohmann/json.hpp>

#include "postgres_error.hpp"

namespace baton::postgres_detail {
namespace {

store_error unexpected(const std::string& what, const char* statement = "acquire") {
  return {postgres_errc::unexpected_reply, std::string(statement) + ": " + what};
}

std::optional<long long> integer(const std::optional<std::string>& cell) {
  if (!cell) return std::nullopt;
  long long value = 0;
  const auto* end = cell->data() + cell->size();
  const auto [ptr, ec] = std::from_chars(cell->data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<bool> boolean(const std::optional<std::string>& cell) {
  if (cell == "t") return true;
  if (cell == "f") return false;
  return std::nullopt;
}

}  // namespace

parsed_acquire parse_acquire_rows(const result_rows& rows) {
  parsed_acquire out;
  if (rows.empty()) {
    // Another candidate created the row during this statement (its insert won
    // and this one's update could not see the new row): try again later.
    out.answer = acquire_answer{};
    out.answer.outcome = acquire_outcome::held;
    return out;
  }
  if (rows.size() != 1 || rows[0].size() < 15) {
    out.error = unexpected(std::to_string(rows.size()) + " rows of " +
                           std::to_string(rows[0].size()) + " columns, expected 1 of 15");
    return out;
  }
  const auto& row = rows[0];
  const auto reset = boolean(row[1]);
  const auto missing = boolean(row[2]);
  const auto token = integer(row[5]);
  const auto remaining = integer(row[6]);
  const auto restarted = boolean(row[9]);
  const auto free_in_us = integer(row[12]);
  const auto outranked_by = integer(row[14]);
  if (!row[0] || !reset || !missing || !row[4] || !token || *token < 0 || !remaining ||
      !restarted || !row[7] || !row[10] || !free_in_us || !row[13] || !outranked_by ||
      *outranked_by > std::numeric_limits<int>::max()) {
    out.error = unexpected("a row with a missing or malformed column");
    return out;
  }
  if (*row[0] == "acquired") {
    out.answer.outcome = acquire_outcome::acquired;
  } else if (*row[0] == "held") {
    out.answer.outcome = acquire_outcome::held;
  } else if (*row[0] == "held_back") {
    out.answer.outcome = acquire_outcome::held_back;
  } else {
    out.error = unexpected("unknown outcome \"" + *row[0] + "\"");
    return out;
  }
  out.answer.holder = *row[4];
  out.answer.token = static_cast<std::uint64_t>(*token);
  out.answer.remaining = milliseconds(*remaining);
  // Only a plain "held" says when the lease is free; -1 elsewhere. Only
  // "held" is reserved (for a node other than this one), or outranked.
  if (out.answer.outcome == acquire_outcome::held) {
    if (*free_in_us >= 0) out.answer.free_in = std::chrono::microseconds(*free_in_us);
    out.answer.reserved_for = *row[13];
    if (*outranked_by >= 0) out.answer.outranked_by = static_cast<int>(*outranked_by);
  }
  out.reset = *reset;
  out.missing = *missing;
  out.restarted = *restarted;
  out.lost_why = row[11].value_or("");
  out.epoch = *row[7];
  out.wal_position = *row[10];
  if (row.size() > 15) {
    const auto server_time = integer(row[15]);
    const auto left = row.size() > 16 ? boolean(row[16]) : std::nullopt;
    if (!server_time || !left) {
      out.error = unexpected("a malformed server time or clock verdict");
      return out;
    }
    out.server_time_us = *server_time;
    out.left_for_the_clock = *left;
  }
  if (row.size() > 17) {
    const auto abstained = row.size() > 18 ? boolean(row[18]) : std::nullopt;
    if (!abstained) {
      out.error = unexpected("a malformed failsafe verdict");
      return out;
    }
    if (row[17]) {
      auto hold = parse_failsafe_hold(*row[17]);
      if (!hold) {
        out.error = unexpected("a malformed failsafe hold: " + *row[17]);
        return out;
      }
      out.answer.outcome = acquire_outcome::held_back;
      out.answer.holder.clear();
      out.answer.remaining = milliseconds(-1);
      out.answer.why = "failsafe hold: " + hold->leader + "'s term " + std::to_string(hold->token) +
                       " may still run on its peers' confirmations";
      out.answer.failsafe_hold = std::move(*hold);
    } else if (*abstained) {
      out.abstained = true;
      out.answer.outcome = acquire_outcome::held_back;
      out.answer.holder.clear();
      out.answer.remaining = milliseconds(-1);
      out.answer.why =
          "registered only: this node may not take the lease yet (lease.failsafe peers)";
    }
  }
  return out;
}

std::string failsafe_peers_json(const std::vector<failsafe_peer>& peers) {
  auto list = nlohmann::json::array();
  for (const auto& p : peers) list.push_back({{"node", p.node}, {"address", p.address}});
  return list.dump();
}

std::optional<failsafe_hold_info> parse_failsafe_hold(const std::string& json) {
  const auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  const auto text = [](const nlohmann::json& o, const char* key) -> std::optional<std::string> {
    const auto it = o.find(key);
    if (it == o.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  const auto leader = text(j, "leader");
  const auto address = text(j, "address");
  const auto token = j.find("token");
  const auto peers = j.find("peers");
  if (!leader || leader->empty() || !address || token == j.end() ||
      !token->is_number_unsigned() || token->get<std::uint64_t>() == 0 || peers == j.end() ||
      !peers->is_array()) {
    return std::nullopt;
  }
  failsafe_hold_info hold{*leader, token->get<std::uint64_t>(), *address, {}};
  for (const auto& p : *peers) {
    if (!p.is_object()) return std::nullopt;
    const auto node = text(p, "node");
    const auto peer_address = text(p, "address");
    if (!node || node->empty() || !peer_address) return std::nullopt;
    hold.peers.push_back({*node, *peer_address});
  }
  return hold;
}

parsed_look parse_look_rows(const result_rows& rows) {
  parsed_look out;
  if (rows.empty()) return out;
  const auto token = rows.size() == 1 && rows[0].size() == 2 ? integer(rows[0][1]) : std::nullopt;
  if (!token || *token < 0 || !rows[0][0] || rows[0][0]->empty()) {
    out.error = unexpected("a row with a missing or malformed column", "look");
    return out;
  }
  out.holder = {*rows[0][0], static_cast<std::uint64_t>(*token)};
  return out;
}

parsed_candidates parse_candidate_rows(const result_rows& rows) {
  parsed_candidates out;
  for (const auto& row : rows) {
    const bool shaped = row.size() == 6 || row.size() == 7;
    const auto priority = shaped ? integer(row[1]) : std::nullopt;
    const auto live_for = shaped ? integer(row[2]) : std::nullopt;
    const auto attempt_ago = shaped ? integer(row[3]) : std::nullopt;
    const auto cooling = shaped ? integer(row[4]) : std::nullopt;
    if (!shaped || !row[0] || row[0]->empty() || !priority || !live_for || !attempt_ago ||
        !cooling || *priority < std::numeric_limits<int>::min() ||
        *priority > std::numeric_limits<int>::max()) {
      out.error = unexpected("a row with a missing or malformed column", "candidates");
      out.list.clear();
      return out;
    }
    // A server clock stepped back makes a fresh registration look younger
    // than 0: it has just begun. The statement keeps the other two at 0 or
    // above.
    out.list.push_back({*row[0], static_cast<int>(*priority),
                        milliseconds(std::max<long long>(*live_for, 0)),
                        milliseconds(std::max<long long>(*attempt_ago, 0)),
                        milliseconds(std::max<long long>(*cooling, 0))});
    out.list.back().card = row[5].value_or("");
    if (row.size() == 7) out.list.back().peer_address = row[6].value_or("");
  }
  return out;
}

namespace {

// The first `parts` parts of a '/'-separated epoch.
std::string leading_parts(const std::string& epoch, int parts) {
  std::size_t end = 0;
  for (int i = 0; i < parts; ++i) {
    if (i > 0) ++end;  // past the '/' found last
    end = epoch.find('/', end);
    if (end == std::string::npos) return epoch;
  }
  return epoch.substr(0, end);
}

}  // namespace

std::string epoch_cluster(const std::string& epoch) { return leading_parts(epoch, 2); }

std::string epoch_server(const std::string& epoch) { return leading_parts(epoch, 3); }

std::string epoch_reset_mark(const std::string& epoch) {
  const auto server = epoch_server(epoch);
  return server.size() < epoch.size() ? epoch.substr(server.size() + 1) : std::string();
}

}  // namespace baton::postgres_detail
