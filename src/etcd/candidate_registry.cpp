#include "candidate_registry.hpp"

#include <algorithm>
#include <charconv>

namespace baton::etcd_detail {

namespace {

// One decimal number of a value, the whole of `text`; nullopt otherwise.
template <typename T>
std::optional<T> number(std::string_view text) {
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string registration_value(const registration& r) {
  std::string v = std::to_string(r.priority) + " " + std::to_string(r.live.count()) + " " +
                  std::to_string(r.lapsed_below);
  if (r.cooling > milliseconds(0) && r.marks > 0) {
    v += " " + std::to_string(r.cooling.count()) + " " + std::to_string(r.marks);
  }
  if (!r.card.empty() || r.failsafe) v += "\n" + r.card;
  if (r.failsafe) {
    const auto& f = *r.failsafe;
    v += "\nfailsafe " + (f.address.empty() ? std::string("-") : f.address) + " " +
         std::to_string(f.promise_token) + " " +
         (f.promise_leader.empty() ? std::string("-") : f.promise_leader) + " " +
         std::to_string(std::max<std::int64_t>(f.promise_left.count(), 0));
  }
  return v;
}

namespace {

// The words of one line, split at single spaces.
std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  for (std::size_t at = 0;;) {
    const auto space = line.find(' ', at);
    words.push_back(line.substr(at, space == std::string_view::npos ? space : space - at));
    if (space == std::string_view::npos) break;
    at = space + 1;
  }
  return words;
}

// "failsafe <address> <token> <leader> <ms left>"; nullopt otherwise.
std::optional<registration_failsafe> parse_failsafe_line(std::string_view line) {
  const auto w = words_of(line);
  if (w.size() != 5 || w[0] != "failsafe") return std::nullopt;
  const auto token = number<std::uint64_t>(w[2]);
  const auto left = number<std::int64_t>(w[4]);
  if (!token || !left || *left < 0 || w[1].empty() || w[3].empty()) return std::nullopt;
  registration_failsafe f;
  f.address = w[1] == "-" ? std::string() : std::string(w[1]);
  f.promise_token = *token;
  f.promise_leader = w[3] == "-" ? std::string() : std::string(w[3]);
  f.promise_left = milliseconds(*left);
  return f;
}

}  // namespace

std::optional<registration> parse_registration(std::string_view value) {
  std::string card;
  std::optional<registration_failsafe> failsafe;
  if (const auto nl = value.find('\n'); nl != std::string_view::npos) {
    card = std::string(value.substr(nl + 1));
    value = value.substr(0, nl);
    // A third line is lease.failsafe peers' (a line of another form stays
    // part of the card, as a version before this one reads it).
    if (const auto second = card.find('\n'); second != std::string::npos) {
      failsafe = parse_failsafe_line(std::string_view(card).substr(second + 1));
      if (failsafe) card.resize(second);
    }
  }
  // Three fields, or five with a cool-down.
  std::vector<std::string_view> fields;
  for (std::size_t at = 0;;) {
    const auto space = value.find(' ', at);
    fields.push_back(value.substr(at, space == std::string_view::npos ? space : space - at));
    if (space == std::string_view::npos) break;
    at = space + 1;
  }
  if (fields.size() != 3 && fields.size() != 5) return std::nullopt;
  const auto priority = number<int>(fields[0]);
  const auto live = number<std::int64_t>(fields[1]);
  const auto lapsed_below = number<std::int64_t>(fields[2]);
  if (!priority || !live || !lapsed_below || *live < 0 || *lapsed_below < 0) return std::nullopt;
  registration r{*priority, milliseconds(*live), *lapsed_below};
  r.card = std::move(card);
  r.failsafe = std::move(failsafe);
  if (fields.size() == 5) {
    const auto cooling = number<std::int64_t>(fields[3]);
    const auto marks = number<std::int64_t>(fields[4]);
    if (!cooling || !marks || *cooling <= 0 || *marks <= 0) return std::nullopt;
    r.cooling = milliseconds(*cooling);
    r.marks = *marks;
  }
  return r;
}

revision_clock::revision_clock(milliseconds span) : span_(span) {}

void revision_clock::observe(std::int64_t revision, time_point at) {
  if (revision <= 0) return;
  if (!seen_.empty() && (revision < seen_.back().revision || at < seen_.back().at)) return;
  // The last entry takes every answer until span/16 after the one before
  // it, the newest kept: that only ever says a revision arrived later than
  // it did.
  if (seen_.size() >= 2 && at - seen_[seen_.size() - 2].at < span_ / 16) {
    seen_.back() = {at, revision};
  } else {
    seen_.push_back({at, revision});
  }
  // Kept: the newest entry at or before at - span, and every later one.
  while (seen_.size() > 1 && seen_[1].at <= at - span_) seen_.pop_front();
}

std::int64_t revision_clock::seen_by(time_point t) const {
  std::int64_t highest = 0;
  for (const auto& e : seen_) {
    if (e.at > t) break;
    highest = e.revision;
  }
  return highest;
}

std::optional<time_point> revision_clock::first_at_or_above(std::int64_t revision) const {
  for (const auto& e : seen_)
    if (e.revision >= revision) return e.at;
  return std::nullopt;
}

void revision_clock::clear() {
  seen_.clear();
}

milliseconds registration_run::live_at(time_point now) const {
  if (!last_ || !since_ || now - *last_ > lifetime_) return milliseconds(0);
  return std::chrono::floor<milliseconds>(now - *since_);
}

bool registration_run::due(time_point now) const {
  return lost_ || !last_ || now - *last_ >= refresh();
}

void registration_run::put(time_point sent, std::int64_t revision) {
  if (!last_ || sent - *last_ > lifetime_) since_ = sent;
  if (!last_ || sent > *last_) last_ = sent;
  // Answers may come out of order: the newest put counts.
  if (revision >= last_revision_) {
    last_revision_ = revision;
    lost_ = false;
  }
}

void registration_run::found(const std::optional<key_value>& kv, std::int64_t answer_revision) {
  // An answer from before the last put says nothing of it.
  if (last_revision_ == 0 || answer_revision < last_revision_) return;
  if (!kv || kv->mod_revision != last_revision_) lost_ = true;
}

std::optional<registration_run::standing> registration_run::standing_at(time_point now) const {
  if (lost_ || !last_ || !since_ || last_revision_ <= 0 || now - *last_ > lifetime_) {
    return std::nullopt;
  }
  return standing{last_revision_, std::chrono::floor<milliseconds>(*last_ - *since_)};
}

std::optional<cooling_put> cooling_mark(const registration_run& run, time_point now, int priority,
                                        std::int64_t lapsed_below, milliseconds cooldown,
                                        const std::string& card,
                                        const std::optional<registration_failsafe>& failsafe) {
  const auto standing = run.standing_at(now);
  if (!standing || cooldown <= milliseconds(0)) return std::nullopt;
  const registration r{priority, standing->live, lapsed_below, cooldown,
                       standing->revision, card,  failsafe};
  return cooling_put{registration_value(r), standing->revision};
}

judged_candidates judge_candidates(const std::vector<key_value>& kvs, std::string_view prefix,
                                   const revision_clock& clock, time_point now,
                                   milliseconds lifetime) {
  struct read {
    const key_value* kv;
    registration r;
  };
  std::vector<read> found;
  // Lapsed at or below: this store's own judgment, or any registrant's (a
  // value's own claim is only believed below its own revision).
  std::int64_t lapsed_below = clock.seen_by(now - lifetime);
  for (const auto& kv : kvs) {
    if (kv.key.size() <= prefix.size() || kv.key.compare(0, prefix.size(), prefix) != 0) continue;
    const auto r = parse_registration(kv.value);
    if (!r) continue;
    if (r->lapsed_below < kv.mod_revision) lapsed_below = std::max(lapsed_below, r->lapsed_below);
    found.push_back({&kv, *r});
  }
  // At least the time since an answer at or above `revision` arrived.
  const auto since = [&](std::int64_t revision) {
    const auto by = clock.first_at_or_above(revision);
    return by && *by < now ? std::chrono::floor<milliseconds>(now - *by) : milliseconds(0);
  };
  judged_candidates out;
  for (const auto& f : found) {
    // A cool-down's mark is judged as the registration it marks (a mark
    // that claims a later one is judged as itself).
    const bool mark = f.r.marks > 0 && f.r.marks < f.kv->mod_revision;
    const auto registered = mark ? f.r.marks : f.kv->mod_revision;
    if (registered <= lapsed_below) {
      out.lapsed.push_back(*f.kv);
      continue;
    }
    const auto since_put = since(registered);
    const auto cooling =
        mark ? std::max(f.r.cooling - since(f.kv->mod_revision), milliseconds(0)) : milliseconds(0);
    candidate_info info{
        f.kv->key.substr(prefix.size()), f.r.priority, f.r.live + since_put, since_put, cooling};
    info.card = f.r.card;
    if (f.r.failsafe) {
      info.peer_address = f.r.failsafe->address;
      // A promise counts down from its own put (a cool-down's mark carries
      // it again, and so makes it no shorter).
      const auto& p = *f.r.failsafe;
      if (p.promise_token != 0 && p.promise_left > since(f.kv->mod_revision)) {
        out.promises.push_back({info.node, p.address, p.promise_token, p.promise_leader});
      }
    }
    out.live.push_back(std::move(info));
  }
  return out;
}

int count_outranking(const std::vector<candidate_info>& live, std::string_view self,
                     std::string_view holder, int priority) {
  return static_cast<int>(std::count_if(live.begin(), live.end(), [&](const candidate_info& c) {
    return c.priority > priority && c.node != self && c.node != holder;
  }));
}

}  // namespace baton::etcd_detail
