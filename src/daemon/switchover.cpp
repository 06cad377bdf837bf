#include "switchover.hpp"

#include <algorithm>
#include <stdexcept>

#include "baton/candidate_card.hpp"
#include "baton/duration.hpp"

namespace baton {

void candidate_snapshot::update(std::vector<candidate_info> listed, time_point now) {
  std::map<std::string, time_point> seen;
  for (const auto& c : listed) {
    const auto it = first_seen.find(c.node);
    seen[c.node] = it != first_seen.end() ? it->second : now;
  }
  first_seen = std::move(seen);
  list = std::move(listed);
  at = now;
  error.clear();
}

milliseconds candidate_snapshot::live_for(const candidate_info& c, time_point now) const {
  if (c.live_for >= milliseconds(0)) return c.live_for;
  const auto it = first_seen.find(c.node);
  if (it == first_seen.end()) return milliseconds(0);
  return std::chrono::duration_cast<milliseconds>(now - it->second);
}

std::optional<candidate_info> preemption_target(const candidate_snapshot& known,
                                                const std::string& self, int own_priority,
                                                milliseconds preempt_delay, milliseconds led_for,
                                                milliseconds settle, time_point now) {
  std::optional<candidate_info> best;
  if (led_for < settle) return best;
  for (const auto& c : known.list) {
    if (c.node == self || c.priority <= own_priority || !card_allows_succession(c.card)) continue;
    auto live = known.live_for(c, now);
    if (live < preempt_delay) continue;
    candidate_info judged = c;
    judged.live_for = live;
    if (!best || judged.priority > best->priority ||
        (judged.priority == best->priority &&
         (judged.live_for > best->live_for ||
          (judged.live_for == best->live_for && judged.node < best->node)))) {
      best = judged;
    }
  }
  return best;
}

switchover_request parse_switchover_request(const nlohmann::json& request,
                                            milliseconds default_window, milliseconds max_window) {
  switchover_request r;
  const auto to = request.find("to");
  if (to == request.end() || !to->is_string() || to->get_ref<const std::string&>().empty()) {
    throw std::runtime_error("switchover needs \"to\": the node id to hand over to");
  }
  r.to = to->get<std::string>();
  if (r.to.size() > 256) throw std::runtime_error("\"to\" is longer than 256 bytes");
  r.window = default_window;
  if (const auto w = request.find("window_ms"); w != request.end() && !w->is_null()) {
    if (!w->is_number_integer() || w->get<long long>() <= 0) {
      throw std::runtime_error("\"window_ms\" must be a positive integer (milliseconds)");
    }
    const auto ms = w->get<long long>();
    if (ms > max_window.count()) {
      throw std::runtime_error("\"window_ms\" " + std::to_string(ms) + " is longer than " +
                               format_duration(max_window) + " (ten ttls)");
    }
    r.window = milliseconds(ms);
  }
  if (const auto f = request.find("force"); f != request.end() && !f->is_null()) {
    if (!f->is_boolean()) throw std::runtime_error("\"force\" must be true or false");
    r.force = f->get<bool>();
  }
  return r;
}

std::string leader_advertise(const std::string& leader, const std::string& self,
                             const std::string& own_advertise, const candidate_snapshot& known) {
  if (leader.empty()) return {};
  if (leader == self) return own_advertise;
  for (const auto& c : known.list) {
    if (c.node == leader) return parse_candidate_card(c.card).card.advertise;
  }
  return {};
}

nlohmann::json candidates_report(const candidate_snapshot& known, const std::string& self) {
  if (!known.at) return nullptr;
  auto list = known.list;
  std::sort(list.begin(), list.end(), [&](const candidate_info& a, const candidate_info& b) {
    if ((a.node == self) != (b.node == self)) return a.node == self;
    return a.node < b.node;
  });
  auto out = nlohmann::json::array();
  for (const auto& c : list) {
    const auto card = parse_candidate_card(c.card);
    out.push_back({{"node", c.node},
                   {"priority", c.priority},
                   {"standing", card.error.empty() ? nlohmann::json(to_string(card.card.standing))
                                                   : nlohmann::json(nullptr)},
                   {"advertise", card.card.advertise.empty()
                                     ? nlohmann::json(nullptr)
                                     : nlohmann::json(card.card.advertise)},
                   {"live_for_ms", c.live_for.count() < 0 ? nlohmann::json(nullptr)
                                                          : nlohmann::json(c.live_for.count())},
                   {"last_attempt_ms_ago", c.last_attempt_ago.count() < 0
                                               ? nlohmann::json(nullptr)
                                               : nlohmann::json(c.last_attempt_ago.count())},
                   {"cooling_down_ms", c.cooling_down_for.count()}});
    if (!card.error.empty()) out.back()["card_error"] = card.error;
  }
  return out;
}

}  // namespace baton
