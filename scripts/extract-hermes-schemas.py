#!/usr/bin/env python3
"""Extract the tool schemas hermes-agent sends to the model, at the commit pinned in
scripts/hermes-pin.json, into the golden file the schema test compares traj's tools with.

    python3 scripts/extract-hermes-schemas.py --git-dir PATH [--commit NEW]

PATH is a git directory holding hermes-agent's history (a clone, or a mirror of a fork that
carries it). With --commit, the pin is moved to NEW first; the outputs then show, as a diff to
review, every schema that changed:

- tests/fixtures/hermes/tool-schemas.json: the schema of each tool traj shares with Hermes;
- src/tools/hermes-tool-names.ts: every tool name Hermes registers (the hermes export pads
  tool_stats with it) and the commit.

Schemas are read with Python's ast, not imported: Hermes' dependencies are not needed. A value
the reader cannot compute without running Hermes (a description built from configuration at
import time) is written as null and listed under "dynamic"; any other value it cannot compute
(a type, an enum, a required list) stops the script with the file and line.
"""

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = ROOT / "scripts" / "hermes-pin.json"
GOLDEN = ROOT / "tests" / "fixtures" / "hermes" / "tool-schemas.json"
NAMES = ROOT / "src" / "tools" / "hermes-tool-names.ts"


LOCAL = object()
CONVERSIONS = {"list": list, "tuple": list, "sorted": sorted}


class Dynamic(Exception):
    """A value that only running Hermes would know."""


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True).stdout


class Module:
    """One tools/*.py file at one commit: its top-level assignments, evaluated on demand."""

    def __init__(self, path, source, assume=None):
        self.assume = assume or {}
        self.path = path
        self.source = source
        self.tree = ast.parse(source, filename=path)
        self.assigned = {}
        for node in self.tree.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned[target.id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
                self.assigned[node.target.id] = node.value
        self.functions = {node.name: node for node in self.tree.body if isinstance(node, ast.FunctionDef)}
        self.cache = {}

    def where(self, node):
        return f"{self.path}:{getattr(node, 'lineno', '?')}"

    def name(self, name, node):
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        if name in self.assume:
            return self.assume[name]
        if name not in self.assigned:
            raise Dynamic(f"{self.where(node)}: '{name}' is not a top-level constant")
        if name not in self.cache:
            self.cache[name] = self.eval(self.assigned[name], {})
        return self.cache[name]

    def eval(self, node, scope):
        segment = ast.get_source_segment(self.source, node)
        if segment in self.assume:
            return self.assume[segment]
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if scope.get(node.id) is LOCAL:
                raise Dynamic(f"{self.where(node)}: '{node.id}' is computed when Hermes runs")
            return scope[node.id] if node.id in scope else self.name(node.id, node)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.eval(item, scope) for item in node.elts]
        if isinstance(node, ast.Dict):
            return self.dict(node, scope)
        if isinstance(node, ast.JoinedStr):
            return "".join(self.formatted(part, scope) for part in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.eval(node.left, scope) + self.eval(node.right, scope)
        if isinstance(node, ast.Subscript):
            return self.eval(node.value, scope)[self.eval(node.slice, scope)]
        if isinstance(node, ast.DictComp) and len(node.generators) == 1:
            return self.dict_comprehension(node, scope)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions:
            return self.returned(self.functions[node.func.id])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CONVERSIONS:
            if len(node.args) == 1 and not node.keywords:
                return CONVERSIONS[node.func.id](self.eval(node.args[0], scope))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join":
            separator = self.eval(node.func.value, scope)
            if isinstance(separator, str) and len(node.args) == 1:
                return separator.join(self.eval(node.args[0], scope))
        raise Dynamic(f"{self.where(node)}: cannot compute {ast.get_source_segment(self.source, node)!r}")

    def returned(self, function):
        """The dict a schema-building function returns; its local variables are what Hermes computes."""
        returns = [node for node in function.body if isinstance(node, ast.Return) and node.value is not None]
        if not returns:
            raise Dynamic(f"{self.where(function)}: {function.name} returns no value at its top level")
        local = {arg.arg: LOCAL for arg in function.args.args}
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local[node.id] = LOCAL
        return self.eval(returns[-1].value, local)

    def formatted(self, part, scope):
        if isinstance(part, ast.Constant):
            return part.value
        value = self.eval(part.value, scope)
        if part.format_spec is not None:
            return format(value, self.eval(part.format_spec, scope))
        return {115: str, 114: repr, 97: ascii}.get(part.conversion, str)(value)

    def dict(self, node, scope):
        result = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                result.update(self.eval(value, scope))
                continue
            name = self.eval(key, scope)
            try:
                result[name] = self.eval(value, scope)
            except Dynamic:
                # Only prose may depend on configuration; a type, enum or required list may not.
                if name != "description":
                    raise
                result[name] = None
        return result

    def dict_comprehension(self, node, scope):
        generator = node.generators[0]
        if not isinstance(generator.target, ast.Name) or generator.ifs:
            raise Dynamic(f"{self.where(node)}: comprehension too complex")
        result = {}
        for item in self.eval(generator.iter, scope):
            inner = {**scope, generator.target.id: item}
            result[self.eval(node.key, inner)] = self.eval(node.value, inner)
        return result

    def registrations(self):
        """(name, schema node) of each top-level registry.register(name=..., schema=...) call."""
        for node in self.tree.body:
            call = node.value if isinstance(node, ast.Expr) else None
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            if call.func.attr != "register" or not isinstance(call.func.value, ast.Name):
                continue
            if call.func.value.id != "registry":
                continue
            keywords = {keyword.arg: keyword.value for keyword in call.keywords}
            if isinstance(keywords.get("name"), ast.Constant) and "schema" in keywords:
                yield keywords["name"].value, keywords["schema"]


def dynamic_paths(value, path=""):
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else key
            if item is None and key == "description":
                yield here
            else:
                yield from dynamic_paths(item, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from dynamic_paths(item, f"{path}.{index}")


def read_module(git_dir, commit, path, assume=None):
    return Module(f"{commit[:9]}:{path}", git(git_dir, "show", f"{commit}:{path}"), assume)


def schema_of(git_dir, commit, file, tool, assume):
    module = read_module(git_dir, commit, file, assume)
    for name, node in module.registrations():
        if name == tool:
            try:
                return module.eval(node, {})
            except Dynamic as error:
                sys.exit(f"{tool}: {error}")
    sys.exit(f"{tool}: no registry.register(name={tool!r}, ...) in {file} at {commit}")


def registered_names(git_dir, commit):
    files = git(git_dir, "ls-tree", "--name-only", commit, "tools/").split()
    names = set()
    for file in files:
        if file.endswith(".py"):
            names.update(name for name, _ in read_module(git_dir, commit, file).registrations())
    return sorted(names)


def write_names(commit, names):
    lines = [
        "// Generated by scripts/extract-hermes-schemas.py from hermes-agent; do not edit by hand.",
        "",
        "/** The hermes-agent commit traj's tool dialect follows (scripts/hermes-pin.json). */",
        f"export const HERMES_COMMIT = '{commit}';",
        "",
        "/** Every tool hermes-agent registers at that commit: its batch runner pads tool_stats with these. */",
        "export const HERMES_TOOL_NAMES: readonly string[] = [",
        *[f"  '{name}'," for name in names],
        "];",
        "",
    ]
    NAMES.write_text("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", required=True, help="a git directory with hermes-agent's history")
    parser.add_argument("--commit", help="move the pin to this commit first")
    options = parser.parse_args()
    pin = json.loads(PIN.read_text())
    if options.commit:
        pin["commit"] = git(options.git_dir, "rev-parse", f"{options.commit}^{{commit}}").strip()
        PIN.write_text(json.dumps(pin, indent=2, ensure_ascii=False) + "\n")
    commit = pin["commit"]
    tools = {}
    dynamic = {}
    for tool, source in pin["tools"].items():
        at = source.get("commit", commit)
        schema = schema_of(options.git_dir, at, source["file"], tool, pin.get("assume", {}).get(source["file"]))
        tools[tool] = {"source": f"{source['file']}@{at[:9]}" if at != commit else source["file"], "schema": schema}
        paths = list(dynamic_paths(schema))
        if paths:
            dynamic[tool] = paths
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    golden = {"commit": commit, "dynamic": dynamic, "tools": tools}
    GOLDEN.write_text(json.dumps(golden, indent=2, ensure_ascii=False) + "\n")
    write_names(commit, registered_names(options.git_dir, commit))
    print(f"{len(tools)} schemas from {commit[:9]} -> {GOLDEN.relative_to(ROOT)}; names -> {NAMES.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
