// See baton/metrics.hpp. prometheus-cpp does the bookkeeping and the text
// format (escaping included); this file registers each family from its row
// of metric_families() (metric_families.cpp), fixes their label sets and
// creates the series that must exist from the start.
#include "baton/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include "label_set.hpp"

namespace baton {
namespace {

const std::vector<std::string> state_names = {"idle",    "acquiring", "working", "renewing",
                                              "pausing", "releasing", "stopped"};
const std::vector<std::string> redis_commands = {"acquire", "renew", "release"};
const std::vector<std::string> hook_names = {"on_start", "on_stop"};
const std::vector<std::string> usual_redis_errors = {"connect", "timeout", "reply", "closed",
                                                     "auth",    "other"};
constexpr std::size_t redis_error_kind_limit = 32;
// The store-neutral kinds (store_error_kinds() in lease_store.hpp), all
// exposed from the start at 0, so a dashboard's first auth failure is a step
// from 0 rather than a series appearing out of nowhere.
const std::vector<std::string> store_errors = {"unavailable", "timeout", "auth",  "protocol",
                                               "no_quorum",   "refused", "other"};
const std::vector<std::string> app_failure_kinds = {"start_failed", "exited", "killed"};

// The baton_redis_errors_total kind that a store-neutral kind counts as: the
// Redis-era labels, kept so existing dashboards go on working.
std::string_view legacy_redis_kind(std::string_view kind) {
  if (kind == "unavailable") return "connect";
  if (kind == "protocol" || kind == "refused") return "reply";
  if (kind == "timeout" || kind == "auth") return kind;
  return "other";
}

// A lease round trip on loopback takes ~0.1 ms; a command that needs seconds
// is already longer than any sane renew deadline.
const prometheus::Histogram::BucketBoundaries redis_buckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,   0.1,     0.25,   0.5,   1.0,    2.5,   5.0};
// A timer on an idle machine fires within ~0.1 ms; on a loaded one, tens of
// milliseconds late already matter to a short lease.
const prometheus::Histogram::BucketBoundaries timer_delay_buckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0};
// A healthy leader's renewal lands at renew_interval / renew_deadline (0.5 by
// default) plus its round trip; retries push it up; at 1 the leader stops.
const prometheus::Histogram::BucketBoundaries renewal_ratio_buckets = {
    0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0};
// Hooks range from a quick notification to a long drain (up to minutes).
const prometheus::Histogram::BucketBoundaries hook_buckets = {
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0};

// Durations and remaining times are never negative; a clock oddity must not
// show up as a negative sum.
double non_negative(double seconds) { return std::isnan(seconds) || seconds < 0 ? 0.0 : seconds; }

// The row of metric_families() named `name`. Every name asked for is one of
// this file's own literals, so a miss is a programming error caught by the
// first test that makes a metrics object.
const metric_family& family_row(std::string_view name) {
  for (const auto& row : metric_families()) {
    if (row.name == name) return row;
  }
  std::abort();
}

// Registers the family `name` with its help text from metric_families().
template <typename Builder>
auto& family(Builder builder, std::string_view name, prometheus::Registry& registry) {
  const auto& row = family_row(name);
  return builder.Name(std::string(row.name)).Help(std::string(row.help)).Register(registry);
}

}  // namespace

struct metrics::impl {
  prometheus::Registry registry;

  using gauges = prometheus::Family<prometheus::Gauge>;
  using counters = prometheus::Family<prometheus::Counter>;
  using histograms = prometheus::Family<prometheus::Histogram>;

  gauges& info = family(prometheus::BuildGauge(), "baton_info", registry);
  gauges& state = family(prometheus::BuildGauge(), "baton_state", registry);
  counters& transitions = family(prometheus::BuildCounter(), "baton_transitions_total", registry);
  prometheus::Gauge& is_leader =
      family(prometheus::BuildGauge(), "baton_is_leader", registry).Add({});
  prometheus::Counter& leader_changes =
      family(prometheus::BuildCounter(), "baton_leader_changes_total", registry).Add({});
  prometheus::Counter& switchovers =
      family(prometheus::BuildCounter(), "baton_switchovers_total", registry).Add({});
  prometheus::Gauge& term_token =
      family(prometheus::BuildGauge(), "baton_term_token", registry).Add({});
  gauges& leader_info = family(prometheus::BuildGauge(), "baton_leader_info", registry);
  prometheus::Gauge& lease_remaining =
      family(prometheus::BuildGauge(), "baton_lease_remaining_seconds", registry).Add({});
  prometheus::Histogram& renewal_ratio =
      family(prometheus::BuildHistogram(), "baton_renewal_deadline_ratio", registry)
          .Add({}, renewal_ratio_buckets);
  prometheus::Gauge& live = family(prometheus::BuildGauge(), "baton_live", registry).Add({});
  prometheus::Gauge& ready = family(prometheus::BuildGauge(), "baton_ready", registry).Add({});
  histograms& redis_duration =
      family(prometheus::BuildHistogram(), "baton_redis_command_duration_seconds", registry);
  counters& redis_errors = family(prometheus::BuildCounter(), "baton_redis_errors_total", registry);
  histograms& store_duration =
      family(prometheus::BuildHistogram(), "baton_store_command_duration_seconds", registry);
  counters& store_errors_total =
      family(prometheus::BuildCounter(), "baton_store_errors_total", registry);
  prometheus::Histogram& timer_delay =
      family(prometheus::BuildHistogram(), "baton_timer_delay_seconds", registry)
          .Add({}, timer_delay_buckets);
  counters& app_failures = family(prometheus::BuildCounter(), "baton_app_failures_total", registry);
  histograms& hook_duration =
      family(prometheus::BuildHistogram(), "baton_hook_duration_seconds", registry);
  counters& hook_failures =
      family(prometheus::BuildCounter(), "baton_hook_failures_total", registry);
  prometheus::Gauge& socket_clients =
      family(prometheus::BuildGauge(), "baton_socket_clients", registry).Add({});

  // The series of baton_leader_info now shown (nullptr: none) and its node id.
  std::mutex leader_mutex;
  prometheus::Gauge* leader_series = nullptr;
  std::string leader_id;

  // lease.failsafe peers (docs/safety.md): 0 while the mode is off.
  prometheus::Gauge& failsafe_on_confirmations =
      family(prometheus::BuildGauge(), "baton_failsafe_on_confirmations", registry).Add({});
  prometheus::Gauge& failsafe_round_confirmed =
      family(prometheus::BuildGauge(), "baton_failsafe_round_confirmed", registry).Add({});
  prometheus::Gauge& failsafe_round_asked =
      family(prometheus::BuildGauge(), "baton_failsafe_round_asked", registry).Add({});
  prometheus::Counter& failsafe_rounds_counted =
      family(prometheus::BuildCounter(), "baton_failsafe_rounds_counted_total", registry).Add({});
  prometheus::Gauge& failsafe_promise =
      family(prometheus::BuildGauge(), "baton_failsafe_promise_seconds", registry).Add({});
  prometheus::Counter& failsafe_refused_requests =
      family(prometheus::BuildCounter(), "baton_failsafe_refused_requests_total", registry)
          .Add({});

  label_set states{state_names, state_names.size()};
  label_set commands{redis_commands, redis_commands.size()};
  label_set hooks{hook_names, hook_names.size()};
  label_set error_kinds{usual_redis_errors, redis_error_kind_limit};
  label_set store_error_kinds{store_errors, store_errors.size()};
  label_set app_failure_labels{app_failure_kinds, app_failure_kinds.size()};

  impl(const std::string& election, const std::string& node_id) {
    info.Add({{"version", BATON_VERSION}, {"election", election}, {"node_id", node_id}}).Set(1);
    for (const auto& name : states.known()) {
      state.Add({{"state", name}});
    }
    for (const auto& name : commands.known()) {
      redis_duration.Add({{"command", name}}, redis_buckets);
      store_duration.Add({{"command", name}}, redis_buckets);
    }
    for (const auto& name : hooks.known()) {
      hook_duration.Add({{"hook", name}}, hook_buckets);
      hook_failures.Add({{"hook", name}});
    }
    for (const auto& name : error_kinds.known()) {
      redis_errors.Add({{"kind", name}});
    }
    for (const auto& name : store_error_kinds.known()) {
      store_errors_total.Add({{"kind", name}});
    }
    for (const auto& name : app_failure_labels.known()) {
      app_failures.Add({{"kind", name}});
    }
  }
};

metrics::metrics(std::string election, std::string node_id)
    : impl_(std::make_unique<impl>(election, node_id)) {}

metrics::~metrics() = default;
metrics::metrics(metrics&&) noexcept = default;
metrics& metrics::operator=(metrics&&) noexcept = default;

void metrics::set_state(std::string_view state) {
  for (const auto& name : impl_->states.known()) {
    impl_->state.Add({{"state", name}}).Set(name == state ? 1 : 0);
  }
}

void metrics::on_transition(std::string_view from, std::string_view to) {
  impl_->transitions
      .Add({{"from", impl_->states.admit(from)}, {"to", impl_->states.admit(to)}})
      .Increment();
}

void metrics::set_leader(bool leading) { impl_->is_leader.Set(leading ? 1 : 0); }

void metrics::on_leader_change() { impl_->leader_changes.Increment(); }

void metrics::count_switchover() { impl_->switchovers.Increment(); }

void metrics::set_lease_remaining(double seconds) {
  impl_->lease_remaining.Set(non_negative(seconds));
}

void metrics::observe_redis_command(std::string_view command, double seconds) {
  impl_->redis_duration.Add({{"command", impl_->commands.admit(command)}}, redis_buckets)
      .Observe(non_negative(seconds));
}

void metrics::on_redis_error(std::string_view kind) {
  impl_->redis_errors.Add({{"kind", impl_->error_kinds.admit(kind)}}).Increment();
}

void metrics::observe_store_command(std::string_view command, double seconds) {
  impl_->store_duration.Add({{"command", impl_->commands.admit(command)}}, redis_buckets)
      .Observe(non_negative(seconds));
  observe_redis_command(command, seconds);
}

void metrics::on_store_error(std::string_view kind) {
  impl_->store_errors_total.Add({{"kind", impl_->store_error_kinds.admit(kind)}}).Increment();
  on_redis_error(legacy_redis_kind(kind));
}

void metrics::observe_timer_delay(double seconds) {
  impl_->timer_delay.Observe(non_negative(seconds));
}

void metrics::observe_hook(std::string_view hook, double seconds, bool ok) {
  const std::string name = impl_->hooks.admit(hook);
  impl_->hook_duration.Add({{"hook", name}}, hook_buckets).Observe(non_negative(seconds));
  if (!ok) {
    impl_->hook_failures.Add({{"hook", name}}).Increment();
  }
}

void metrics::set_socket_clients(std::size_t clients) {
  impl_->socket_clients.Set(static_cast<double>(clients));
}

void metrics::set_term_token(std::uint64_t token) {
  impl_->term_token.Set(static_cast<double>(token));
}

void metrics::set_known_leader(std::string_view node_id) {
  std::lock_guard lock(impl_->leader_mutex);
  if (impl_->leader_series != nullptr && impl_->leader_id == node_id) return;
  // An info metric keeps one series: the old leader's goes, so that no
  // query sees two leaders at once.
  if (impl_->leader_series != nullptr) impl_->leader_info.Remove(impl_->leader_series);
  impl_->leader_series = nullptr;
  impl_->leader_id.assign(node_id);
  if (node_id.empty()) return;
  impl_->leader_series = &impl_->leader_info.Add({{"node_id", impl_->leader_id}});
  impl_->leader_series->Set(1);
}

void metrics::set_probes(bool live, bool ready) {
  impl_->live.Set(live ? 1 : 0);
  impl_->ready.Set(ready ? 1 : 0);
}

void metrics::count_app_failure(std::string_view kind) {
  impl_->app_failures.Add({{"kind", impl_->app_failure_labels.admit(kind)}}).Increment();
}

void metrics::observe_renewal_deadline_ratio(double ratio) {
  impl_->renewal_ratio.Observe(non_negative(ratio));
}

std::string metrics::text() const {
  return prometheus::TextSerializer().Serialize(impl_->registry.Collect());
}

void metrics::set_failsafe(const failsafe_gauges& g) {
  impl_->failsafe_on_confirmations.Set(g.on_confirmations ? 1 : 0);
  impl_->failsafe_round_confirmed.Set(static_cast<double>(g.round_confirmed));
  impl_->failsafe_round_asked.Set(static_cast<double>(g.round_asked));
  impl_->failsafe_promise.Set(non_negative(g.promise_seconds));
  // Counters only go up: add what is new since the last call.
  const double counted = impl_->failsafe_rounds_counted.Value();
  if (static_cast<double>(g.rounds_counted) > counted) {
    impl_->failsafe_rounds_counted.Increment(static_cast<double>(g.rounds_counted) - counted);
  }
  const double refused = impl_->failsafe_refused_requests.Value();
  if (static_cast<double>(g.refused_requests) > refused) {
    impl_->failsafe_refused_requests.Increment(static_cast<double>(g.refused_requests) - refused);
  }
}

}  // namespace baton
