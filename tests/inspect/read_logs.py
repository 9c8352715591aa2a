"""Reads gisclaw's inspect logs with inspect_ai's own reader and prints what
it read, as JSON, for tests/all/inspect_log.rs to compare with the eval.

Usage: read_logs.py LOG_DIR
"""
import glob
import json
import sys

from inspect_ai.log import read_eval_log, list_eval_logs


def main(log_dir):
    listed = sorted(info.name.rsplit("/", 1)[-1] for info in list_eval_logs(log_dir))
    out = {"listed": listed, "logs": []}
    for path in sorted(glob.glob(log_dir + "/*.json")):
        log = read_eval_log(path)
        # The header alone, as `inspect view` lists logs: it stops at "samples".
        header = read_eval_log(path, header_only=True)
        assert header.samples is None and header.results is not None, path
        assert header.stats.model_usage == log.stats.model_usage, path
        samples = []
        for s in log.samples:
            samples.append({
                "id": s.id,
                "epoch": s.epoch,
                "input": s.input if isinstance(s.input, str) else None,
                "target": s.target,
                "scores": {name: score.value for name, score in (s.scores or {}).items()},
                "explanation": s.scores["success"].explanation if s.scores else None,
                "usage": {m: {"input": u.input_tokens, "output": u.output_tokens,
                              "total": u.total_tokens, "cost": u.total_cost}
                          for m, u in s.model_usage.items()},
                "roles": [m.role for m in s.messages],
                "tool_calls": [c.id for m in s.messages if m.role == "assistant"
                               for c in (m.tool_calls or [])],
                "tool_results": [m.tool_call_id for m in s.messages if m.role == "tool"],
                "functions": [c.function for m in s.messages if m.role == "assistant"
                              for c in (m.tool_calls or [])],
                "first_call_arguments": next((c.arguments for m in s.messages if m.role == "assistant"
                                              for c in (m.tool_calls or [])), None),
                "output_text": s.output.choices[0].message.text if s.output.choices else None,
                "total_time": s.total_time,
            })
        out["logs"].append({
            "file": path.rsplit("/", 1)[-1],
            "version": log.version,
            "status": log.status,
            "task": log.eval.task,
            "solver": log.eval.solver,
            "model": log.eval.model,
            "dataset_samples": log.eval.dataset.samples,
            "sample_ids": log.eval.dataset.sample_ids,
            "epochs": log.eval.config.epochs,
            "revision": log.eval.revision.commit if log.eval.revision else None,
            "provenance": (log.eval.metadata or {}).get("provenance") is not None,
            "results": {s.name: {k: m.value for k, m in s.metrics.items()} for s in log.results.scores},
            "total_samples": log.results.total_samples,
            "completed_samples": log.results.completed_samples,
            "usage": {m: {"input": u.input_tokens, "output": u.output_tokens, "cost": u.total_cost}
                      for m, u in log.stats.model_usage.items()},
            "samples": samples,
        })
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
