// The Redis store's acquire: the acquire script (plain, or with
// lease.failsafe peers), and with a replica requirement WAIT behind a grant,
// which is given back when too few replicas acknowledged it.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "redis_store_impl.hpp"
#include "replica_requirement.hpp"

namespace baton {

void redis_store::async_acquire(acquire_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.acquire(d.acquire_keys(), d.acquire_args(), std::move(handler));
}

// The acquire script with `script_keys` and `args` (plain, or with
// lease.failsafe peers), and WAIT behind a grant with a replica requirement.
void redis_store::impl::acquire(std::vector<std::string> script_keys, std::vector<std::string> args,
                                acquire_handler handler) {
  auto& d = *this;
  auto report = [&d](const acquire_script_reply& a) {
    if (a.answer.acquired()) d.term_token = a.answer.token;
    if (a.found_reset) d.report_script_reset(a);
    d.follow_runner(a.answer);
  };
  if (!d.options.ack.on()) {
    d.eval(redis_detail::acquire_script(), std::move(script_keys), std::move(args),
           [&d, report, handler = std::move(handler)](command_result r) {
             d.finish<acquire_script_reply>(
                 r, parse_acquire_reply, [&report, &handler](store_error e, acquire_script_reply a) {
                   if (!e) report(a);
                   handler(std::move(e), std::move(a.answer));
                 });
           });
    return;
  }
  // A standby's attempt stays one command: only a grant is followed by
  // WAIT, on the connection that carried it.
  auto sent_on = std::make_shared<std::uint64_t>(0);
  d.eval(redis_detail::acquire_script(), std::move(script_keys), std::move(args),
         [&d, report, sent_on, handler = std::move(handler)](command_result r) {
           d.finish<acquire_script_reply>(
               r, parse_acquire_reply, [&](store_error e, acquire_script_reply a) {
                 if (!e) report(a);
                 if (!e && a.replicas_short) {
                   // Refused before the grant: nothing to give back.
                   handler(d.shell.note_failure(
                               {redis_errc::not_acknowledged,
                                "acquire refused: " +
                                    replica_shortfall(*a.replicas_short, a.replicas_needed,
                                                      d.ack_requirement(), d.keys.replicas)}),
                           acquire_answer{});
                   return;
                 }
                 if (e || !a.answer.acquired()) {
                   handler(std::move(e), std::move(a.answer));
                   return;
                 }
                 d.ack_needed = a.replicas_needed;
                 d.acknowledge(
                     *sent_on, a.replicas_needed,
                     [&d, answer = std::move(a.answer), announce = a.announce,
                      handler](const std::string& shortfall) {
                       if (d.shell.closed()) {
                         handler(store_shell::aborted(), acquire_answer{});
                         return;
                       }
                       if (shortfall.empty()) {
                         if (announce) d.announce(answer.token);
                         handler({}, answer);
                         return;
                       }
                       // A grant the replicas may not have: a failover now would
                       // lose it while this node worked. Give it back, as silently
                       // as it was made.
                       d.eval(redis_detail::release_script(), d.release_keys(),
                              d.release_args(false),
                              [&d, shortfall, handler](command_result) {
                                handler(
                                    d.shell.note_failure({redis_errc::not_acknowledged,
                                                          "acquire not acknowledged: " + shortfall +
                                                              " (redis.replica_ack); released it"}),
                                    acquire_answer{});
                              });
                     });
               });
         });
  // The script was queued on this connection (a connect starts inside).
  *sent_on = d.node->connection_generation();
}

}  // namespace baton
