// See baton/metrics.hpp. prometheus-cpp does the bookkeeping and the text
// format (escaping included); this file only names the metrics, fixes their
// label sets and creates the series that must exist from the start.
#include "baton/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <cmath>
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
// Hooks range from a quick notification to a long drain (up to minutes).
const prometheus::Histogram::BucketBoundaries hook_buckets = {
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0};

// Durations and remaining times are never negative; a clock oddity must not
// show up as a negative sum.
double non_negative(double seconds) { return std::isnan(seconds) || seconds < 0 ? 0.0 : seconds; }

}  // namespace

struct metrics::impl {
  prometheus::Registry registry;

  prometheus::Family<prometheus::Gauge>& info =
      prometheus::BuildGauge()
          .Name("baton_info")
          .Help("Always 1; the labels say which baton this is.")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& state =
      prometheus::BuildGauge()
          .Name("baton_state")
          .Help("1 for the election state the daemon is in, 0 for the others.")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& transitions =
      prometheus::BuildCounter()
          .Name("baton_transitions_total")
          .Help("State changes of the election machine, by from and to state.")
          .Register(registry);
  prometheus::Gauge& is_leader = prometheus::BuildGauge()
                                     .Name("baton_is_leader")
                                     .Help("1 while this node holds the lease, else 0.")
                                     .Register(registry)
                                     .Add({});
  prometheus::Counter& leader_changes =
      prometheus::BuildCounter()
          .Name("baton_leader_changes_total")
          .Help("Times this node gained or lost leadership.")
          .Register(registry)
          .Add({});
  prometheus::Counter& switchovers =
      prometheus::BuildCounter()
          .Name("baton_switchovers_total")
          .Help("Times this node, leading, began handing over to a named node (baton switchover).")
          .Register(registry)
          .Add({});
  prometheus::Gauge& lease_remaining =
      prometheus::BuildGauge()
          .Name("baton_lease_remaining_seconds")
          .Help("Seconds left on the lease this node holds, as of the last renewal; 0 when "
                "not leading.")
          .Register(registry)
          .Add({});
  prometheus::Family<prometheus::Histogram>& redis_duration =
      prometheus::BuildHistogram()
          .Name("baton_redis_command_duration_seconds")
          .Help("Round-trip time of lease commands sent to Redis, in seconds.")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& redis_errors =
      prometheus::BuildCounter()
          .Name("baton_redis_errors_total")
          .Help("Failed Redis operations, by kind of failure.")
          .Register(registry);
  prometheus::Family<prometheus::Histogram>& store_duration =
      prometheus::BuildHistogram()
          .Name("baton_store_command_duration_seconds")
          .Help("Round-trip time of lease commands sent to the store, in seconds.")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& store_errors_total =
      prometheus::BuildCounter()
          .Name("baton_store_errors_total")
          .Help("Failed store operations, by store-neutral kind of failure.")
          .Register(registry);
  prometheus::Histogram& timer_delay =
      prometheus::BuildHistogram()
          .Name("baton_timer_delay_seconds")
          .Help("How late the daemon's timers fired (renewals, retries, deadlines), in seconds: "
                "the event loop's delay.")
          .Register(registry)
          .Add({}, timer_delay_buckets);
  prometheus::Family<prometheus::Histogram>& hook_duration =
      prometheus::BuildHistogram()
          .Name("baton_hook_duration_seconds")
          .Help("Run time of hook commands, in seconds.")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& hook_failures =
      prometheus::BuildCounter()
          .Name("baton_hook_failures_total")
          .Help("Hook runs that failed (non-zero exit, signal, timeout or spawn error).")
          .Register(registry);
  prometheus::Gauge& socket_clients = prometheus::BuildGauge()
                                          .Name("baton_socket_clients")
                                          .Help("Clients connected to the app socket.")
                                          .Register(registry)
                                          .Add({});

  // lease.failsafe peers (docs/safety.md): 0 while the mode is off.
  prometheus::Gauge& failsafe_on_confirmations =
      prometheus::BuildGauge()
          .Name("baton_failsafe_on_confirmations")
          .Help("1 while this leader's app runs on its peers' confirmations (the store cannot "
                "be reached and a round counted), else 0.")
          .Register(registry)
          .Add({});
  prometheus::Gauge& failsafe_round_confirmed =
      prometheus::BuildGauge()
          .Name("baton_failsafe_round_confirmed")
          .Help("Peers that confirmed this leader's current round of confirmations.")
          .Register(registry)
          .Add({});
  prometheus::Gauge& failsafe_round_asked =
      prometheus::BuildGauge()
          .Name("baton_failsafe_round_asked")
          .Help("Peers this leader's current round of confirmations asked.")
          .Register(registry)
          .Add({});
  prometheus::Counter& failsafe_rounds_counted =
      prometheus::BuildCounter()
          .Name("baton_failsafe_rounds_counted_total")
          .Help("Rounds of confirmations in which every listed peer confirmed.")
          .Register(registry)
          .Add({});
  prometheus::Gauge& failsafe_promise =
      prometheus::BuildGauge()
          .Name("baton_failsafe_promise_seconds")
          .Help("Seconds left of the promise this node keeps to a leader it confirmed (it takes "
                "no lease meanwhile); 0 when none.")
          .Register(registry)
          .Add({});
  prometheus::Counter& failsafe_refused_requests =
      prometheus::BuildCounter()
          .Name("baton_failsafe_refused_requests_total")
          .Help("Requests the peer port refused: malformed, another election or node, a wrong or "
                "missing MAC.")
          .Register(registry)
          .Add({});

  label_set states{state_names, state_names.size()};
  label_set commands{redis_commands, redis_commands.size()};
  label_set hooks{hook_names, hook_names.size()};
  label_set error_kinds{usual_redis_errors, redis_error_kind_limit};
  label_set store_error_kinds{store_errors, store_errors.size()};

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
