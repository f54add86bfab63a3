"""YAML parsing speed: `safe_yaml_load` (every importer's YAML: bundles, front matter, rule
files) against PyYAML's pure-Python `SafeLoader`, which it was built on until the thirty-sixth
session (about 4 s per MB: a 50 MB one-line file, under the 100 MB an ingest reads, took
minutes).

Usage:

    PYTHONPATH=. .venv/bin/python benchmarks/yaml_parsing.py [--sizes 1,10,50] [--reference-mb 1]

Two shapes of generated bundle text, no file read: `one-line` (a flow mapping on one line, as a
hostile file would be) and `block` (the indented shape people write). `--reference-mb`: the
size the pure-Python loader is timed at (it takes seconds per MB). CPU seconds of this process
(the machine may be shared). A benchmark, not an
assertion: it prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import yaml

from graph_schema.collector import cyclic_gc_paused
from graph_schema.safe_yaml import safe_yaml_load


def _node(n: int) -> dict[str, str]:
    return {"id": f"svc:service-{n}", "label": "Service", "name": f"service {n}", "tier": "1"}


def one_line(megabytes: float) -> str:
    """A flow-style bundle on one line of about `megabytes` MB."""
    item = "{id: 'svc:service-%d', label: Service, name: 'service %d', tier: '1'}"
    parts, size, n = [], 0, 0
    while size < megabytes * 1_000_000:
        parts.append(item % (n, n))
        size += len(parts[-1]) + 2
        n += 1
    return "{tenant: acme, nodes: [" + ", ".join(parts) + "]}"


def block(megabytes: float) -> str:
    """An indented bundle of about `megabytes` MB."""
    lines, size, n = ["tenant: acme", "nodes:"], 0, 0
    while size < megabytes * 1_000_000:
        node = _node(n)
        item = "  - " + "\n    ".join(f"{key}: '{value}'" for key, value in node.items())
        lines.append(item)
        size += len(item) + 1
        n += 1
    return "\n".join(lines) + "\n"


def _seconds(load: Callable[[str], object], text: str) -> float:
    """CPU seconds (this process's own, so that other work on the machine does not count) of
    one parse, with the cyclic collector paused as `load_bundle` pauses it."""
    with cyclic_gc_paused():
        began = time.process_time()
        load(text)
        return time.process_time() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,10,50", help="MB of each text (default 1,10,50)")
    parser.add_argument("--reference-mb", type=float, default=0.5)
    args = parser.parse_args()
    sizes = [float(size) for size in args.sizes.split(",")]
    print(f"libyaml: {yaml.__with_libyaml__}, PyYAML {yaml.__version__}")
    print(
        "| shape | MB | safe_yaml_load CPU s | CPU s per MB | pure-Python SafeLoader CPU s per MB |"
    )
    print("|---|---:|---:|---:|---:|")
    for shape, make in (("one-line", one_line), ("block", block)):
        reference = make(args.reference_mb)
        pure = _seconds(lambda text: yaml.load(text, Loader=yaml.SafeLoader), reference)
        pure_per_mb = pure / (len(reference) / 1e6)
        for size in sizes:
            text = make(size)
            mb = len(text) / 1e6
            seconds = _seconds(safe_yaml_load, text)
            print(
                f"| {shape} | {mb:.1f} | {seconds:.2f} | {seconds / mb:.3f} | {pure_per_mb:.2f} |"
            )


if __name__ == "__main__":
    main()
