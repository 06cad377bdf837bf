// A standby's follow of another holder's etcd lease to its end: the
// time-to-live answers an acquire got, and those it asks for itself when
// expiry_proof says, until etcd's answers prove the lease expired; then the
// standby revokes it (deleting the lease and holder keys) and tries at once,
// rather than wait up to 500 ms for etcd's own expiry check. expiry_proof.hpp
// says why that is safe and when nothing is tried. The acquire that follows
// is the usual one: it finds the last holder's lease gone, and waits it out
// when the revoke was answered in a later raft term than the lease's term
// began in (may_have_ended_early), so revoking never skips that wait.
//
// A revoke etcd refuses (the role lacks write on a key of that lease) is
// said once as a warning, and the store waits for etcd from then on.
#include "etcd_store_impl.hpp"

#include <boost/asio/error.hpp>
#include <memory>
#include <string>
#include <utility>

#include "baton/lease_drift.hpp"

namespace baton {

void etcd_store::impl::follow_tail(const key_value& kv, const ttl_reading& r) {
  if (tail_refused || shell.closed() || term) return;
  // lease.failsafe peers (F6): a term the record holds above what this node
  // cleared may run on its peers' confirmations after its lease expired; it
  // is not this standby's to end early. etcd expires the lease itself.
  if (failsafe_on() && last_record && last_record->value == identity_of(kv.value) &&
      last_record->token > cleared_token) {
    return;
  }
  if (!tail || tail->kv.lease != kv.lease) {
    tail_timer.cancel();
    tail.emplace(followed_lease{
        kv, expiry_proof(stamped_term_of(kv.value).value_or(0), default_drift_factor)});
  }
  const auto step = tail->proof.next(r);
  switch (step.what) {
    case expiry_proof::verdict::ask_at: {
      tail_timer.expires_at(step.at);
      tail_timer.async_wait(
          [this, weak = shell.guard(), lease = kv.lease](const boost::system::error_code& ec) {
            if (weak.expired() || ec) return;
            ask_tail(lease);
          });
      return;
    }
    case expiry_proof::verdict::expired:
      tail_timer.cancel();
      return end_tail(tail->kv);
    case expiry_proof::verdict::give_up:
      tail_timer.cancel();
      return;
  }
}

// One question of the follow's own. A failed one ends the follow until the
// next acquire's answer feeds it again: the store waits for etcd meanwhile.
void etcd_store::impl::ask_tail(std::int64_t lease) {
  if (!tail || tail->kv.lease != lease || term || shell.closed()) return;
  const auto sent = mono_clock::now();
  client->post("/v3/lease/timetolive", time_to_live_request(lease),
               [this, weak = shell.guard(), lease, sent](store_error e, json j) {
                 if (weak.expired() || shell.closed() || e) return;
                 if (!tail || tail->kv.lease != lease) return;
                 ttl_answer t;
                 try {
                   t = read_time_to_live(j);
                 } catch (const std::exception&) {
                   return;
                 }
                 seen(t.hdr);
                 follow_tail(tail->kv, reading_of(t, sent));
               });
}

// The revoke of a lease proven expired. Its deletes wake every standby
// through the watch; this store says `released` at once as well.
void etcd_store::impl::end_tail(const key_value& kv) {
  client->post(
      "/v3/lease/revoke", lease_id_request(kv.lease),
      [this, weak = shell.guard(), kv](store_error e, json j) {
        if (weak.expired() || shell.closed()) return;
        const auto holder = holder_of(kv.value);
        if (e && e.code == etcd_errc::auth_failed &&
            e.detail.find("permission denied") != std::string::npos) {
          tail_refused = true;
          return shell.emit(store_events::note{
              true, "etcd " + where() + " refused to revoke the expired lease of " + holder +
                        "'s term (" + e.message() +
                        "): this node's role needs write on every key of that lease; standbys "
                        "wait for etcd to expire a crashed holder's lease, up to 500 ms later"});
        }
        // Gone already (etcd's expiry check, or another standby, came
        // first), or not answered: the watch and the next acquire tell.
        if (e) return;
        header hdr;
        try {
          hdr = read_header(j);
        } catch (const std::exception&) {
          return;
        }
        seen(hdr);
        // Answered in the raft term the lease's term began in: the one raft
        // leader of that term applied it, after etcd said the lease expired,
        // so its end was no early revoke, and this store's take need not
        // ask about it again (take(), as for a lease its holder released).
        // A later raft term is left to take(), which waits it out.
        const auto stamped = stamped_term_of(kv.value);
        if (stamped && *stamped > 0 && hdr.raft_term == *stamped) released_lease = kv.lease;
        shell.emit(store_events::note{
            false, "revoked the etcd lease of " + holder +
                       "'s term, which etcd said had expired, rather than wait for etcd's expiry "
                       "check (up to 500 ms)"});
        shell.emit(store_events::released{});
      });
}

ttl_reading etcd_store::impl::reading_of(const ttl_answer& t, time_point sent) {
  return {t.ttl_seconds, t.granted_seconds, t.hdr.raft_term, sent, mono_clock::now()};
}

}  // namespace baton
