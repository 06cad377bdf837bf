// The term the PostgreSQL store holds, and its calls: renew (with
// lease.failsafe peers, writing the record too), release, and hand-over (a
// release that leaves a reservation for the target).
#include <string>
#include <utility>

#include "postgres_store_impl.hpp"

namespace baton {

void postgres_store::async_renew(renew_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.renew(std::nullopt, std::move(handler));
}

void postgres_store::impl::renew(std::optional<failsafe_list> list, renew_handler handler) {
  auto& d = *this;
  const auto& id = d.options.identity;
  auto make = [&d, &id, token = d.token, term = d.term_token, list = std::move(list)] {
    impl::statement s{d.sql.renew(d.registry, list.has_value()),
                      {id.election, id.node_id, d.session, std::to_string(token), d.ttl_ms}};
    if (d.registry) {
      s.params.push_back(std::to_string(id.priority));
      s.params.push_back(id.card);
    }
    if (list) {
      s.params.insert(s.params.end(),
                      {std::to_string(term), std::to_string(list->seq), id.peer_address,
                       postgres_detail::failsafe_peers_json(list->peers)});
    }
    return s;
  };
  d.run(std::move(make),
        [&d, handler = std::move(handler)](query_result r) {
          d.finish<renew_answer>(r, handler, [&](const auto& rows) {
            handler(store_error{}, rows.size() == 1 ? renew_answer::renewed : renew_answer::lost);
          });
        });
}

void postgres_store::async_release(release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  const auto& id = d.options.identity;
  d.run(impl::statement{d.sql.release(d.failsafe_on()),
                        {id.election, id.node_id, d.session, std::to_string(d.token),
                         d.sql.table()}},
        [&d, handler = std::move(handler)](query_result r) {
          d.finish<release_answer>(r, handler, [&](const auto& rows) {
            if (rows.size() == 1) d.token = 0;
            handler(store_error{},
                    rows.size() == 1 ? release_answer::released : release_answer::not_ours);
          });
        });
}

void postgres_store::async_hand_over(const std::string& to_node, milliseconds window,
                                     release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  // The reservation is written into the holder column with spaces around
  // the target's node id (lease_sql_parts.hpp): one with a space could not be
  // read back.
  const bool not_a_node_id = to_node.empty() || to_node.find(' ') != std::string::npos;
  if (d.shell.reject_input(not_a_node_id ? "cannot hand over to \"" + to_node +
                                               "\": not a node id (empty, or with a space)"
                                         : std::string(),
                           handler)) {
    return;
  }
  const auto& id = d.options.identity;
  d.run(impl::statement{d.sql.hand_over(d.failsafe_on()),
                        {id.election, id.node_id, d.session, std::to_string(d.token), d.sql.table(),
                         to_node, std::to_string(window.count())}},
        [&d, handler = std::move(handler)](query_result r) {
          d.finish<release_answer>(r, handler, [&](const auto& rows) {
            if (rows.size() == 1) d.token = 0;
            handler(store_error{},
                    rows.size() == 1 ? release_answer::released : release_answer::not_ours);
          });
        });
}

}  // namespace baton
