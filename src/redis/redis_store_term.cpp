// The term the Redis store holds, and its calls: renew (the renew script, or
// the resume script of lease.failsafe peers, with WAIT right behind it under
// a replica requirement), release, and hand-over (the release script with a
// reservation for the target).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "redis_store_impl.hpp"
#include "replica_requirement.hpp"

namespace baton {

void redis_store::async_renew(renew_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  if (!d.options.ack.on()) {
    d.renew(redis_detail::renew_script(), d.plain_renew_keys(), d.renew_args(), std::move(handler));
  } else {
    d.renew(redis_detail::renew_script(), d.required_renew_keys(), d.renew_args(),
            std::move(handler));
  }
}

namespace {

// A renewal that lists (renew_args' "list") answers {its answer, the
// registry's lines}: the answer goes on as any renewal's, the lines to the
// watcher (store_events::listed) once the renewal's handler has run. A
// resume, a lost lease or a registry that could not be read answer bare.
struct listed_renewal {
  command_result answer;
  std::optional<redis_reply> listed;
};

listed_renewal split_listing(command_result r) {
  auto& e = r.reply.elements;
  if (r.ec || r.reply.kind != redis_reply::type::array || e.size() != 2 ||
      e[1].kind != redis_reply::type::array)
    return {std::move(r), std::nullopt};
  listed_renewal out;
  out.listed = std::move(e[1]);
  out.answer.reply = std::move(e[0]);
  return out;
}

}  // namespace

void redis_store::impl::tell_listed(const std::optional<redis_reply>& listed) {
  if (!listed || shell.closed()) return;
  auto parsed = parse_candidates_reply(*listed, options.identity.ttl);
  // A malformed list is the candidates call's business, not the renewal's:
  // the leader then lists them as a standby would, when asked.
  if (parsed.ec) return;
  store_events::listed e;
  for (auto& c : parsed.value) e.candidates.push_back(std::move(c.info));
  shell.emit(e);
}

// `script` (the renew or the resume script) with `script_keys` and `args`;
// with a replica requirement, WAIT right behind it.
void redis_store::impl::renew(const lua_script& script, std::vector<std::string> script_keys,
                              std::vector<std::string> args, renew_handler handler) {
  auto& d = *this;
  if (!d.options.ack.on()) {
    d.eval(script, std::move(script_keys), std::move(args),
           [&d, weak = d.shell.guard(), handler = std::move(handler)](command_result r) {
             auto split = split_listing(std::move(r));
             d.finish<renew_answer>(split.answer, parse_renew_reply, handler);
             if (!weak.expired()) d.tell_listed(split.listed);
           });
    return;
  }
  // WAIT goes right behind the script, so it counts the replicas the last
  // script answered; the script's own answer is checked against it after.
  const int sent_needed = d.ack_needed;
  d.node->eval_with(
      script, std::move(script_keys), std::move(args), d.wait_command(sent_needed),
      [&d, sent_needed, weak = d.shell.guard(),
       handler = std::move(handler)](redis_detail::eval_reply r) {
        if (weak.expired()) return;
        auto split = split_listing(std::move(r.script));
        d.finish<required_renewal>(
            split.answer, parse_required_renew_reply, [&](store_error e, required_renewal a) {
              if (e) {
                handler(std::move(e), renew_answer::lost);
                return;
              }
              if (a.short_of) {
                // Not extended: the renew deadline runs on and stops the app.
                handler(d.shell.note_failure(
                            {redis_errc::not_acknowledged,
                             "renewal refused: " + replica_shortfall(*a.short_of, a.needed,
                                                                     d.ack_requirement(),
                                                                     d.keys.replicas)}),
                        renew_answer::lost);
                return;
              }
              if (a.answer != renew_answer::renewed) {
                handler({}, a.answer);
                return;
              }
              d.ack_needed = a.needed;
              const int needed = std::max(a.needed, sent_needed);
              const auto shortfall =
                  impl::ack_shortfall(r.follow_up, needed, d.options.ack.timeout);
              if (!shortfall.empty()) {
                // Extended on the master only: a failover could lose it, so
                // the renewal does not count and the renew deadline runs on.
                handler(d.shell.note_failure(
                            {redis_errc::not_acknowledged,
                             "renewal not acknowledged: " + shortfall + " (redis.replica_ack)"}),
                        renew_answer::lost);
                return;
              }
              handler({}, a.answer);
            });
        if (!weak.expired()) d.tell_listed(split.listed);
      });
}

void redis_store::async_release(release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.eval(redis_detail::release_script(), d.release_keys(), d.release_args(),
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<release_answer>(r, parse_release_reply, handler);
         });
}

// The release script with a reservation: one atomic step that frees our
// lease, announces it as any release, and leaves the key reserved for
// `to_node` for the window (scripts.hpp).
void redis_store::async_hand_over(const std::string& to_node, milliseconds window,
                                  release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  if (d.shell.reject_input(redis_detail::hand_over_target_problem(to_node), handler)) return;
  // The token "": the released term's is the counter's, as for a release.
  std::vector<std::string> args{d.value,
                                d.keys.channel,
                                d.publish_command(),
                                "",
                                to_node,
                                std::to_string(std::max<long long>(window.count(), 0)),
                                d.options.identity.node_id};
  d.eval(redis_detail::release_script(), d.release_keys(), std::move(args),
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<release_answer>(r, parse_release_reply, handler);
         });
}

}  // namespace baton
