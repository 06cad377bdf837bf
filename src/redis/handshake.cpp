// The handshake's plan and how each step reads its reply. See handshake.hpp.
#include "handshake.hpp"

#include <utility>
#include <variant>

#include "redis_error.hpp"

namespace baton::redis_detail {

handshake::handshake(handshake_settings settings) : settings_(std::move(settings)) {
  if (!settings_.password.empty()) plan_.push_back(step::auth);
  if (settings_.db != 0) plan_.push_back(step::select);
  // Knowing which server answers (its run_id changes on every restart and
  // failover) must come before any queued command runs there.
  if (settings_.read_run_id) plan_.push_back(step::info);
  if (settings_.confirm_master) plan_.push_back(step::role);
}

handshake::action handshake::resume() {
  if (outcome_) return *outcome_;
  if (sent_ < plan_.size()) {
    action a{action_type::send, {}, {}, {}};
    switch (plan_[sent_++]) {
      case step::auth:
        a.command = {"AUTH"};
        if (!settings_.username.empty()) a.command.push_back(settings_.username);
        // Handed over once: the machine keeps no copy of the secret.
        a.command.push_back(std::move(settings_.password));
        break;
      case step::select:
        a.command = {"SELECT", std::to_string(settings_.db)};
        break;
      case step::info:
        a.command = {"INFO", "server"};
        break;
      case step::role:
        a.command = {"ROLE"};
        break;
    }
    return a;
  }
  if (read_ == plan_.size()) return finish({action_type::done, {}, {}, {}});
  return {action_type::await_reply, {}, {}, {}};
}

handshake::action handshake::resume(const redis_reply& reply) {
  if (outcome_) return *outcome_;
  if (read_ == sent_) {
    // The connection matches replies to commands; one here is its bug, and
    // the attempt ends rather than guess what the reply answers.
    return finish({action_type::failed,
                   {},
                   redis_errc::protocol_error,
                   "a reply to no handshake command: " + describe_reply(reply)});
  }
  auto outcome = read(plan_[read_++], reply);
  if (outcome.type == action_type::failed) return finish(std::move(outcome));
  return resume();
}

handshake::action handshake::read(step s, const redis_reply& reply) {
  const auto failed = [](std::error_code ec, std::string detail) {
    return action{action_type::failed, {}, ec, std::move(detail)};
  };
  const bool refused = reply.kind == redis_reply::type::error;
  switch (s) {
    case step::auth:
      if (refused) {
        const auto& user = settings_.username;
        return failed(redis_errc::auth_failed,
                      "AUTH" + (user.empty() ? std::string() : " as " + user) + ": " + reply.str);
      }
      break;
    case step::select:
      if (refused) {
        return failed(redis_errc::connect_failed,
                      "SELECT " + std::to_string(settings_.db) + ": " + reply.str);
      }
      break;
    case step::info:
      if (refused && reply.str.starts_with("NOAUTH")) {
        // Not logged in: every command will be refused, and one of more than
        // ten elements (the lease scripts' EVAL) not with NOAUTH but as a
        // protocol error that names no cause. Fail here, in the server's words.
        return failed(redis_errc::auth_failed, "INFO server: " + reply.str);
      }
      if (refused && reply.str.starts_with("NOPERM")) {
        // Without INFO a restart or failover would go unnoticed.
        return failed(redis_errc::permission_denied,
                      "INFO server: " + reply.str +
                          " (baton reads the server's run_id to notice restarts: grant +info)");
      }
      // Any other refusal (a renamed INFO, say) leaves the run_id empty, and
      // the node compares nothing on this connection.
      run_id_ = reply.kind == redis_reply::type::string ? run_id_from_info(reply.str) : "";
      break;
    case step::role: {
      if (refused) {
        return failed(classify_error_reply(reply.str) == redis_errc::permission_denied
                          ? redis_errc::permission_denied
                          : redis_errc::not_master,
                      "ROLE at " + settings_.peer + ": " + reply.str +
                          " (baton confirms that the server it was sent to is a master: grant "
                          "+role)");
      }
      const auto role = master_role(reply);
      if (const auto* name = std::get_if<std::string>(&role)) {
        return failed(redis_errc::not_master,
                      settings_.peer + " is " + (name->starts_with("an ") ? *name : "a " + *name) +
                          ", not a master");
      }
      break;
    }
  }
  return {action_type::await_reply, {}, {}, {}};
}

handshake::action handshake::finish(action outcome) {
  outcome_ = outcome;
  return outcome;
}

}  // namespace baton::redis_detail
