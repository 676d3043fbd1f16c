"""Turns oracle.py's output for each release into records of tests/fixtures/megatron.txt (its
format: tests/common/mod.rs), printed in cases.json's order, one block per release.

usage: python3 to_fixture.py cases.json RELEASE=COMMAND_ID=results.jsonl ...
Each record: the case's link with `version=RELEASE`; the data-parallel size validate_args set
(compared) and its expert sizes (recorded, `~`); `ok` when validate_args accepted, else
`error: ` and the exception as Megatron raised it.
"""
import json
import sys
from urllib.parse import quote


def main():
    cases = {c["case"]: c for c in json.load(open(sys.argv[1]))}
    for spec in sys.argv[2:]:
        release, command, path = spec.split("=", 2)
        results = [json.loads(l) for l in open(path) if l.startswith('{"case"')]
        assert [r["case"] for r in results] == list(cases), f"{path}: not every case ran"
        for r in results:
            c = cases[r["case"]]
            link = [("framework", "megatron"), ("version", release)] + [
                (k, v) for k, v in c["link"] if k != "framework"]
            q = "&".join(f"{k}={quote(v, safe='')}" for k, v in link)
            if r.get("accepted"):
                outputs = (f"dp_world_size=int:{r['data_parallel_size']} "
                           f"~num_experts=int:{r['num_experts']} "
                           f"~expert_model_parallel_size=int:{r['expert_model_parallel_size']} "
                           f"~expert_tensor_parallel_size=int:{r['expert_tensor_parallel_size']}")
                outcome = "ok"
            else:
                outputs = "-"
                outcome = "error: " + r["error"]
            print(f"megatron {release} {command} {r['case']} | {q} | {outputs} | {outcome}")


main()
