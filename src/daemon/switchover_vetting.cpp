#include "switchover_vetting.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "baton/candidate_card.hpp"
#include "baton/duration.hpp"

namespace baton {
namespace {

// A node id as it may appear in an error line: control characters and
// anything past 64 bytes would make the line unreadable.
std::string node_text(const std::string& text) {
  std::string out = "'";
  for (char c : text.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  if (text.size() > 64) out += "...";
  return out + "'";
}

std::string names_of(const std::vector<candidate_info>& list, const std::string& self) {
  std::vector<std::string> names;
  for (const auto& c : list)
    if (c.node != self) names.push_back(node_text(c.node));
  std::sort(names.begin(), names.end());
  if (names.empty()) return "none besides this node";
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A measured time, to a tenth of a second rounded up ("7.1s"): a refusal
// says when to try again, and too early would be refused again.
std::string seconds_text(milliseconds d) {
  const auto tenths = (std::max<long long>(d.count(), 0) + 99) / 100;
  char text[32];
  std::snprintf(text, sizeof text, "%lld.%llds", tenths / 10, tenths % 10);
  return text;
}

// What the list said, moved on to `now`: the list is as old as the renewal
// that made it.
struct judged {
  const candidate_info* info = nullptr;
  std::optional<milliseconds> attempt_ago;  ///< nullopt: the store cannot tell
  milliseconds cooling_left{0};
};

judged judge(const candidate_info& c, milliseconds list_age) {
  judged j;
  j.info = &c;
  if (c.last_attempt_ago >= milliseconds(0)) j.attempt_ago = c.last_attempt_ago + list_age;
  j.cooling_left = std::max(c.cooling_down_for - list_age, milliseconds(0));
  return j;
}

bool overdue(const judged& j, milliseconds gap) { return j.attempt_ago && *j.attempt_ago > gap; }

switchover_verdict refuse(std::string why, std::optional<milliseconds> ready_in = std::nullopt) {
  return {switchover_decision::refuse, std::move(why), ready_in};
}

}  // namespace

switchover_verdict vet_switchover(const switchover_question& q, const candidate_snapshot& known) {
  const auto to = node_text(q.to);
  if (q.to == q.self) return refuse(to + " is this node, which leads already");
  if (!known.at || q.now - *known.at > q.list_max_age) {
    std::string why = "the store's list of candidates is not known yet";
    if (known.at) why = "the store's list of candidates is out of date";
    if (!known.error.empty()) why += " (" + known.error + ")";
    return refuse(why + ": cannot tell whether " + to + " would take the lease");
  }
  const auto list_age =
      std::max(std::chrono::duration_cast<milliseconds>(q.now - *known.at), milliseconds(0));
  const auto target = std::find_if(known.list.begin(), known.list.end(),
                                   [&](const candidate_info& c) { return c.node == q.to; });
  if (target == known.list.end()) {
    return refuse(to +
                  " is not a live candidate: the store saw no acquire attempt from it within "
                  "two ttls (live candidates: " +
                  names_of(known.list, q.self) +
                  "); handing over to it would leave the election without a leader");
  }
  // Drained or never leading (or a card this version cannot read): it
  // takes no lease, whatever --force says.
  if (const auto card = parse_candidate_card(target->card); !card.error.empty()) {
    return refuse(to + "'s registration cannot be read (" + card.error +
                  "): it is no successor");
  } else if (card.card.standing == candidate_standing::drained) {
    return refuse(to + " is drained: it takes no lease until `baton undrain` on it");
  } else if (card.card.standing == candidate_standing::never) {
    return refuse(to + " is configured never to lead (never_lead): it takes no lease");
  }
  const auto t = judge(*target, list_age);
  if (t.cooling_left > milliseconds(0)) {
    return refuse(to + " is cooling down after it gave the lease up: it makes no acquire attempt "
                       "for another " +
                      seconds_text(t.cooling_left) +
                      ", and would leave the election without a leader until then; hand over "
                      "to it in " +
                      seconds_text(t.cooling_left),
                  t.cooling_left);
  }
  if (overdue(t, q.attempt_gap)) {
    return refuse(to + " made no acquire attempt for " + seconds_text(*t.attempt_ago) +
                  " (a live candidate makes one at least every " + seconds_text(q.attempt_gap) +
                  "): it is frozen, stopped or cut off from the store, and would leave the "
                  "election without a leader; it can take the lease once it tries again");
  }

  // Who would take the lease back: the highest priority above the target's
  // among the others that will be back (the leader too, after its own
  // cool-down), the smallest node id among equals.
  std::optional<candidate_info> better;
  bool self_listed = false;
  for (const auto& c : known.list) {
    if (c.node == q.self) self_listed = true;
    if (c.node == q.to || overdue(judge(c, list_age), q.attempt_gap)) continue;
    if (c.node != q.self && !card_allows_succession(c.card)) continue;
    const int priority = c.node == q.self ? q.own_priority : c.priority;
    if (priority <= target->priority) continue;
    if (!better || priority > better->priority ||
        (priority == better->priority && c.node < better->node)) {
      better = c;
      better->priority = priority;
    }
  }
  if (!self_listed && q.own_priority > target->priority &&
      (!better || q.own_priority > better->priority)) {
    better = candidate_info{q.self, q.own_priority};
  }
  if (!better) return {};
  const auto outranked = node_text(better->node) + " (priority " + std::to_string(better->priority) +
                         ") outranks " + to + " (priority " + std::to_string(target->priority) +
                         ")";
  const auto delay = "lease.preempt_delay (" + format_duration(q.preempt_delay) + ")";
  if (!q.force) {
    return refuse(outranked + ": once " + to + " leads, it hands the lease back to " +
                  node_text(better->node) + " after " + delay +
                  "; --force hands over anyway, knowing that it will");
  }
  return {switchover_decision::warn,
          outranked + ": " + to + " will hand the lease back to " + node_text(better->node) +
              " after " + delay,
          std::nullopt};
}

}  // namespace baton
