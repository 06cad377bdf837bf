// The Redis store's calls that hold no term: the candidates' list, the
// cool-down, this store's card, a look at who holds the lease (for a
// candidate that may not lead), and the record created (`baton init-store`).
#include <string>
#include <utility>
#include <vector>

#include "redis_store_impl.hpp"

namespace baton {

void redis_store::async_candidates(candidates_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.eval(redis_detail::candidates_script(), {d.keys.candidates}, {},
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<std::vector<registered_candidate>>(
               r,
               [ttl = d.options.identity.ttl](const redis_reply& reply) {
                 return parse_candidates_reply(reply, ttl);
               },
               [&handler](store_error e, std::vector<registered_candidate> found) {
                 std::vector<candidate_info> out;
                 for (auto& c : found) out.push_back(std::move(c.info));
                 handler(std::move(e), std::move(out));
               });
         });
}

void redis_store::register_cooldown(milliseconds cooldown) {
  auto& d = *impl_;
  if (d.shell.closed() || cooldown <= milliseconds(0)) return;
  d.eval(redis_detail::cooldown_script(), {d.keys.candidates},
         {d.options.identity.node_id, d.value, std::to_string(cooldown.count())},
         [](command_result) {});
}

void redis_store::update_card(std::string card) {
  auto& d = *impl_;
  d.options.identity.card = std::move(card);
  d.priority = redis_detail::registration_argument(d.options.identity.priority,
                                                   d.options.identity.card);
}

// lease.failsafe peers reads a peer address from every live line: a line
// without one would stand for a peer nobody can ask, so a candidate of that
// mode that may not lead stays unlisted instead.
void redis_store::async_look(look_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.eval(redis_detail::standby_script(), {d.keys.candidates, d.keys.lease, d.keys.token},
         {d.options.identity.node_id, d.value, d.priority, d.ttl_ms,
          d.options.identity.peer_address.empty() ? "1" : "0"},
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<lease_holder>(r, parse_look_reply, handler);
         });
}

void redis_store::async_create_record(record_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.eval(redis_detail::create_record_script(), {d.keys.token}, {},
         [&d, handler = std::move(handler)](command_result r) {
           d.finish<record_answer>(r, parse_record_reply, handler);
         });
}

}  // namespace baton
