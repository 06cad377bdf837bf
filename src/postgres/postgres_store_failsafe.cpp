// lease.failsafe peers on the PostgreSQL store: the port's failsafe calls.
// Acquire and renew are the store's own steps with the mode's arguments;
// resume is a statement of its own.
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "postgres_store_impl.hpp"

namespace baton {

void postgres_store::impl::acquire_with_record(const failsafe_acquire& a, acquire_handler handler) {
  acquire(a, std::move(handler));
}

void postgres_store::impl::renew_with_record(const failsafe_list& list, renew_handler handler) {
  renew(list, std::move(handler));
}

// F8: one statement (lease_sql::resume). The row's token it answers is what
// renewals and the release match from now on; the term keeps its own.
void postgres_store::impl::resume_with_record(std::uint64_t token, const failsafe_list& list,
                                              renew_handler handler) {
  auto& d = *this;
  const auto& id = d.options.identity;
  auto make = [&d, &id, token, list] {
    impl::statement s{d.sql.resume(d.registry),
                      {id.election, id.node_id, d.session, std::to_string(token), d.ttl_ms,
                       d.sql.table(), std::to_string(list.seq), id.peer_address,
                       postgres_detail::failsafe_peers_json(list.peers)}};
    if (d.registry) {
      s.params.push_back(std::to_string(id.priority));
      s.params.push_back(id.card);
    }
    return s;
  };
  d.run(std::move(make), [&d, token, handler = std::move(handler)](query_result r) {
    d.finish<renew_answer>(r, handler, [&](const auto& rows) {
      if (rows.size() != 1) {
        handler(store_error{}, renew_answer::lost);
        return;
      }
      const auto& row_token = rows[0].empty() ? std::nullopt : rows[0][0];
      std::uint64_t value = 0;
      if (!row_token ||
          std::from_chars(row_token->data(), row_token->data() + row_token->size(), value).ec !=
              std::errc()) {
        handler(d.shell.note_failure({postgres_errc::unexpected_reply,
                                      "resume: a row with a missing or malformed token"}),
                renew_answer::lost);
        return;
      }
      d.token = value;
      d.term_token = token;
      handler(store_error{}, renew_answer::renewed);
    });
  });
}

}  // namespace baton
