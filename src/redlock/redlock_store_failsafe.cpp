// lease.failsafe peers on the Redlock store: the port's failsafe calls (an
// acquire, a renewal and a resume that carry the record's term and list,
// baton:{E}:failsafe on every master, handed over by failsafe_forwarder),
// their scripts' arguments, and the resume round. How the record is kept across the masters is said in
// docs/stores/redlock.md, "Peer-confirmed leadership".
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "redlock_store_impl.hpp"

namespace baton {
namespace {

// The record's list as the scripts take it: "<node> <address>" lines, "-"
// for an address not published.
std::string redlock_list_text(const failsafe_list& list) {
  std::string text;
  for (const auto& p : list.peers) {
    if (!text.empty()) text += '\n';
    text += p.node + ' ' + (p.address.empty() ? std::string("-") : p.address);
  }
  return text;
}

std::string dash_if_empty(const std::string& s) { return s.empty() ? std::string("-") : s; }

}  // namespace

void redlock_store::impl::acquire_with_record(const failsafe_acquire& a,
                                              acquire_handler handler) {
  acquire(std::move(handler), &a);
}

void redlock_store::impl::renew_with_record(const failsafe_list& list, renew_handler handler) {
  renew(std::move(handler), &list);
}

std::vector<std::string> redlock_store::impl::record_args(const failsafe_list& list) const {
  return {"failsafe", std::to_string(list.seq), options.identity.peer_address,
          redlock_list_text(list)};
}

// The acquire script in grant mode; with the mode, the front runners'
// arguments empty (a master in grant mode takes none) and then the mode's,
// as redis_store::impl::acquire_args(const failsafe_acquire&) passes them.
std::vector<std::string> redlock_store::impl::acquire_args(const failsafe_acquire* mode) const {
  std::vector<std::string> args{value,   ttl_ms, keys.channel, "grant", "", "PUBLISH", "",
                                options.identity.node_id, priority};
  if (mode == nullptr) return args;
  const auto& p = mode->promise;
  args.insert(args.end(),
              {"", "", "", "failsafe", mode->may_win ? "1" : "0",
               std::to_string(mode->cleared_token), options.identity.peer_address,
               p ? std::to_string(p->token) : "0", p ? dash_if_empty(p->leader) : "-",
               p ? std::to_string(std::max<long long>(p->remaining.count(), 0)) : "0",
               std::to_string(mode->list.seq), redlock_list_text(mode->list)});
  return args;
}

// F8 on every master: the resume script (one atomic step per master: nobody
// else holds the lease there and the record holds our term `token` or
// nothing), which on Redlock also lifts the term key to the token. The round
// is a renewal's (on_renewed): renewed when a majority resumed within
// validity, lost when the masters that say another term exists leave no
// majority, an error otherwise, so that the daemon asks again.
void redlock_store::impl::resume_with_record(std::uint64_t token, const failsafe_list& list,
                                             renew_handler handler) {
  auto call = std::make_shared<renew_call>(std::move(handler), size());
  call->sent = mono_clock::now();
  call->what = "resume";
  call->record = record_args(list);
  // The masters taken after a won resume get the term's token.
  held_token = token;
  const std::vector<std::string> script_keys{keys.lease,      keys.token,    keys.holder,
                                             keys.candidates, keys.failsafe, keys.term};
  const std::vector<std::string> args{value,
                                      ttl_ms,
                                      options.identity.node_id,
                                      priority,
                                      "",
                                      std::to_string(token),
                                      std::to_string(list.seq),
                                      options.identity.peer_address,
                                      redlock_list_text(list),
                                      keys.channel,
                                      "PUBLISH",
                                      "term"};
  for (std::size_t i = 0; i < size(); ++i) {
    eval(i, redis_detail::resume_script(), script_keys, args,
         [this, call, i](command_result r) { on_renewed(*call, i, std::move(r)); });
  }
}

}  // namespace baton
