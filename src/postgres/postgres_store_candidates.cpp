// The PostgreSQL store's candidates: the registry's list, the cool-down, the
// card, a look at the holder (registering a node that makes no attempts),
// and the election's record.
#include <string>
#include <utility>
#include <vector>

#include "postgres_store_impl.hpp"

namespace baton {

void postgres_store::async_candidates(candidates_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  using list = std::vector<candidate_info>;
  // The leader asks with every renewal: without the registry it answers
  // what is missing from memory, and looks again (a DBA may have created
  // it or granted its privileges since) only once in a while.
  if (!d.registry && d.schema_ready && !d.registry_recheck_due()) {
    d.shell.fail_later(std::move(handler),
                       store_error{postgres_errc::missing_schema, d.registry_problem});
    return;
  }
  auto go = [&d, weak = d.shell.guard(), handler = std::move(handler)](store_error e) {
    if (weak.expired()) return;
    if (!e && !d.registry) {
      d.finish<list>({}, handler, [&](const auto&) {
        handler(store_error{postgres_errc::missing_schema, d.registry_problem}, list{});
      });
      return;
    }
    if (e) {
      d.finish<list>({e.code, e.detail, {}}, handler, [](const auto&) {});
      return;
    }
    d.query(d.sql.candidates(d.failsafe_on()), {d.options.identity.election, d.ttl_ms},
            [&d, handler](query_result r) {
              d.finish<list>(r, handler, [&](const auto& rows) {
                auto parsed = postgres_detail::parse_candidate_rows(rows);
                if (parsed.error) {
                  handler(d.shell.note_failure(parsed.error), list{});
                  return;
                }
                handler(store_error{}, std::move(parsed.list));
              });
            });
  };
  if (!d.registry && d.schema_ready) {
    // The check again, for this call alone: lease statements meanwhile run
    // as the schema is (schema_ready stays set).
    d.schema_waiters.push_back(std::move(go));
    if (d.schema_waiters.size() == 1) d.check_schema();
    return;
  }
  d.when_ready(std::move(go));
}

void postgres_store::register_cooldown(milliseconds cooldown) {
  auto& d = *impl_;
  // Without the registry nobody could read it; a failure is no error of the
  // lease's, and nothing waits for the answer.
  if (d.shell.closed() || !d.registry || cooldown <= milliseconds(0)) return;
  const auto& id = d.options.identity;
  d.run(impl::statement{d.sql.cooldown(),
                        {id.election, id.node_id, d.session, std::to_string(cooldown.count())}},
        [](query_result) {});
}

void postgres_store::update_card(std::string card) { impl_->options.identity.card = std::move(card); }

// A node that makes no attempts may be the first to need the schema: the
// statement waits for the check, as every statement does, and registers
// with the registry alone.
void postgres_store::async_look(look_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  // With lease.failsafe peers a look registers nothing, as on the Redis
  // kinds: every registered candidate is a peer a leader lists and asks.
  auto make = [&d] {
    const auto& id = d.options.identity;
    const bool registers = d.registry && !d.failsafe_on();
    impl::statement s{d.sql.look(registers), {id.election}};
    if (registers) {
      s.params.insert(s.params.end(), {id.node_id, d.session, d.ttl_ms,
                                       std::to_string(id.priority), id.card});
    }
    return s;
  };
  d.run(std::move(make), [&d, handler = std::move(handler)](query_result r) {
    d.finish<lease_holder>(r, handler, [&](const auto& rows) {
      auto parsed = postgres_detail::parse_look_rows(rows);
      if (parsed.error) {
        handler(d.shell.note_failure(parsed.error), lease_holder{});
        return;
      }
      handler(store_error{}, std::move(parsed.holder));
    });
  });
}

void postgres_store::async_create_record(record_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  d.run(impl::statement{d.sql.create_record(), {d.options.identity.election}},
        [&d, handler = std::move(handler)](query_result r) {
          d.finish<record_answer>(r, handler, [&](const auto& rows) {
            handler(store_error{},
                    rows.size() == 1 ? record_answer::created : record_answer::existed);
          });
        });
}

}  // namespace baton
