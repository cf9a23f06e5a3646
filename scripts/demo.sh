#!/usr/bin/env bash
# The README's first command (`make demo`): burn in a local fleet of GPU clusters with gpufleet.burnin.burnin.
#
#   1. scripts/setup.sh           venvs, kubernetes.core (idempotent, seconds when done before)
#   2. tests/fleet/build.sh --fleet-only  the fleet's components from their Go modules, once per machine (~14 min
#                                 the first time on 2 cores; not the metrics tests' Pushgateway and promtool)
#   3. tests/fleet/fleet.py start the default fleet (tests/fleet/default-fleet.yml) into a temp dir: real
#                                 clusters on 127.0.0.1 (Kubernetes 1.34 and 1.37, Trainer, JobSet, KWOK nodes) and
#                                 the agent that writes the pods' output (nccl-tests as the fleet spec sets it)
#   4. ansible-playbook playbooks/burnin.yml against the fleet's inventory, as a user would run it; it prints
#                                 the fleet summary with a verdict per cluster and writes the JSON, JUnit and
#                                 HTML reports
#   5. stop the fleet and remove the temp dir (nothing is left running), unless GPUFLEET_DEMO_KEEP=1
#
# The default fleet fails five of its seven clusters on purpose, to show how failures are reported:
#   aws-use1-h100-a          Complete, verdict warn   (busbw below the published pass threshold, above its warn)
#   gcp-usc1-h100-a          Complete, verdict pass
#   azure-eus-gb200-a        Failed,   verdict fail   (the TrainJob fails; nccl-tests output cut short, the
#                                                      killed rank's node named)
#   aws-use1-h100-mismatch   Mismatch, no verdict     (group aws_h100, but its nodes are GCP GB200 nodes)
#   aws-usw2-h100-nodes      Complete, verdict fail   (4 nodes, one slow NIC: the isolation names
#                                                      aws-usw2-h100-nodes-gpu-2 after 4 pair jobs; the dcgm stage
#                                                      fails GPU 5 of aws-usw2-h100-nodes-gpu-3)
#   aws-use1-h100-socket     Complete, verdict fail   (NCCL fell back to sockets: the transport check names the
#                                                      expected EFA and the sockets it saw)
#   aws-usw2-h100-nodestage  Complete, verdict fail   (the fleet stage passes; the node stage fails node gpu-1, its
#                                                      own all_reduce slow, so the cluster fails)
# so ansible-playbook itself exits 2 ("some hosts failed"). The demo compares every cluster's outcome with what
# the fleet spec intends and exits:
#   0  the burn-in ran and every cluster ended as the fleet intends (the failures above included), outcome
#      and verdict
#   1  setup, build or fleet start failed
#   2  ansible-playbook did not run to the end (an error other than failed clusters), or wrote no summary
#   3  a cluster ended differently from what the fleet intends
#
# Environment: GPUFLEET_DEMO_SPEC (another fleet spec), GPUFLEET_DEMO_KEEP=1 (leave the fleet running and print
# how to use and stop it), extra arguments are passed to ansible-playbook (e.g. -e burnin_framework=torch -v).
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
spec="${GPUFLEET_DEMO_SPEC:-$repo/tests/fleet/default-fleet.yml}"
log() { printf '[demo] %s\n' "$*" >&2; }

bash "$repo/scripts/setup.sh" || { log "scripts/setup.sh failed"; exit 1; }
export GPUFLEET_ENV_QUIET=1
# shellcheck source=scripts/env.sh
source "$repo/scripts/env.sh"
# The fleet's components only: the Pushgateway and promtool are the metrics tests' (tests/fleet/build.sh).
bash "$repo/tests/fleet/build.sh" --fleet-only || { log "tests/fleet/build.sh failed"; exit 1; }

dir="$(mktemp -d "${TMPDIR:-/tmp}/gpufleet-demo.XXXXXX")"
fleet="$dir/fleet"
finish() {
    if [ -n "${GPUFLEET_DEMO_KEEP:-}" ]; then
        log "fleet left running: inventory $fleet/inventory.yml, kubeconfig $fleet/kubeconfig"
        log "stop it with: python $repo/tests/fleet/fleet.py stop --dir $fleet && rm -rf $dir"
        return
    fi
    python "$repo/tests/fleet/fleet.py" stop --dir "$fleet" >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap finish EXIT

log "starting the fleet of $spec in $fleet"
if ! python "$repo/tests/fleet/fleet.py" start --spec "$spec" --dir "$fleet" >&2; then
    log "the fleet did not start"
    exit 1
fi

run_id="demo-$(date -u +%H%M%S)"
reports="$dir/reports"
cmd=(ansible-playbook -i "$fleet/inventory.yml" "$repo/playbooks/burnin.yml"
    -e burnin_run_id="$run_id" -e burnin_report_dir="$reports" -e burnin_poll_interval=2 -e burnin_timeout=120 "$@")
log "running: ${cmd[*]}"
"${cmd[@]}"
rc=$?

summary="$reports/$run_id/summary.json"
if [ "$rc" != 0 ] && [ "$rc" != 2 ]; then
    log "ansible-playbook failed with exit code $rc (2 would only mean that clusters failed their burn-in)"
    exit 2
fi
if [ ! -s "$summary" ]; then
    log "no fleet summary was written ($summary)"
    exit 2
fi

python - "$spec" "$summary" "$reports/$run_id" <<'EOF'
import json, os, sys
import yaml
# The cluster's verdict as the role's summary and reports judge it (the worst of its stages').
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.environ["GPUFLEET_COLLECTION_DIR"]))))
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import verdict_of
spec = yaml.safe_load(open(sys.argv[1]))
results = json.load(open(sys.argv[2]))
report_dir = sys.argv[3]
bad = 0
print("\nDemo verdict (what the default fleet intends vs what the burn-in reported):")
for c in spec["clusters"]:
    want = "Mismatch" if c.get("nodes_match_group") is False else str(c.get("trainjob_outcome") or "Complete")
    result = results.get(c["name"], {})
    got = result.get("outcome", "no result")
    verdict = verdict_of(result)
    ok = got == want or (want == "none" and got == "Timeout")
    if "expected_verdict" in c:  # the verdict the spec's output leads to with the role's defaults
        ok = ok and (verdict or "none") == str(c["expected_verdict"])
    if c.get("slow_nodes"):  # the isolation must name exactly the nodes the fleet slowed
        ok = ok and sorted((result.get("isolation") or {}).get("culprits") or []) == sorted(c["slow_nodes"])
    bad += not ok
    print("  %-4s %-26s expected %-9s got %-9s verdict %-5s %s" % ("ok" if ok else "DIFF", c["name"], want, got, verdict or "-",
                                                                   result.get("reason", "")[:80]))
report = os.path.join(report_dir, "burnin-report.json")
if os.path.isfile(report):
    summary = json.load(open(report))["summary"]
    print("\nReports (JSON, JUnit XML, HTML) in %s: %d pass, %d warn, %d fail, %d error%s"
          % (report_dir, summary["pass"], summary["warn"], summary["fail"], summary["error"],
             "" if os.environ.get("GPUFLEET_DEMO_KEEP") else " (removed at exit; GPUFLEET_DEMO_KEEP=1 keeps them)"))
else:
    print("\nno report in %s" % report_dir)
    bad += 1
print("\nEvery cluster ended as the fleet intends: the failures above are the fleet's deliberate ones."
      if not bad else "\n%d cluster(s) ended differently from what the fleet intends." % bad)
sys.exit(3 if bad else 0)
EOF
