"""The benchmark harness behind bench/run.py.

One module per job: redis_wire (a tiny RESP client), redis_server (a
throwaway redis-server), proc_stats (/proc readings), processes (spawning and
killing only what we started), event_log (the workers' ground-truth log),
candidates (baton and the peers), peers_setup (finding and installing the
peers), quorum and sentinel_group (the Redlock and Sentinel kinds and the
servers they run on), scenarios (what is measured), report (tables, targets,
JSON).
"""
