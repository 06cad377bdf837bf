// redis.replica_ack on the Redis store: WAIT on the connection that carried
// a grant, what WAIT's reply says (enough replicas, or why not), and the new
// term announced only once its replicas acknowledged it.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "redis_store_impl.hpp"

namespace baton {

// WAIT for a grant sent on connection `sent_on`; `then` gets "" when
// enough replicas acknowledged it, else why not. WAIT on another
// connection would count nothing of ours.
void redis_store::impl::acknowledge(std::uint64_t sent_on, int needed,
                                    std::function<void(std::string)> then) {
  if (node->connection_generation() != sent_on) {
    then("the connection changed before WAIT could be sent");
    return;
  }
  node->exec(wait_command(needed), [weak = shell.guard(), needed, timeout = options.ack.timeout,
                                    then = std::move(then)](command_result r) {
    if (!weak.expired()) then(ack_shortfall(r, needed, timeout));
  });
}

// The new term, once its replicas acknowledged it (the script leaves this
// to us with a replica requirement). Nothing waits for the answer: a lost
// announcement costs standbys only their wake-up, as a lost PUBLISH would.
void redis_store::impl::announce(std::uint64_t term) {
  node->exec({publish_command(), keys.channel, "acquired " + value + " " + std::to_string(term)},
             [](command_result) {});
}

std::vector<std::string> redis_store::impl::wait_command(int needed) const {
  return {"WAIT", std::to_string(needed), std::to_string(options.ack.timeout.count())};
}

// "" when WAIT's reply shows at least `needed` replicas; else why not.
std::string redis_store::impl::ack_shortfall(const std::optional<command_result>& wait, int needed,
                                             milliseconds timeout) {
  // (WAIT's own failure names the connection's.)
  if (!wait) return "no WAIT was sent";
  if (wait->ec) return "WAIT: " + wait->detail;
  if (wait->reply.kind != redis_reply::type::integer) {
    return "WAIT: " + describe_reply(wait->reply);
  }
  if (wait->reply.integer >= needed) return {};
  return std::to_string(wait->reply.integer) + " of " + std::to_string(needed) +
         " replicas acknowledged within " + std::to_string(timeout.count()) + " ms";
}

}  // namespace baton
